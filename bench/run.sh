#!/usr/bin/env bash
# Throughput of authmock against two references, measured in one run on this
# machine, all on 127.0.0.1 and bounded in time:
#   nginx      a static 200: the ceiling for a tiny HTTP answer here
#   hello      a Hummingbird hello-world route: the framework's own floor,
#              sent the same request as /api/me (its Authorization header
#              too), and once without that header for reference
#   /api/me    authmock with a valid token (signature cached, clock and
#              revocation checked on every request)
#   refresh    authmock refresh_token grants with rotation on
# Prints, per target, the server's CPU time per request (from /proc/PID/stat
# over the run: steadier than requests/s on a shared machine, so it is the
# headline), requests/s, p99 and RSS, as medians over ROUNDS rounds that
# interleave the targets; then the ratios the project targets (medians of
# the per-round ratios, with their spread), and authmock's start-to-first-200
# time and idle RSS. Last, the instructions per request of the hello-world
# and /api/me, counted by valgrind's callgrind (the same on every run, to a
# fraction of a percent: what to steer by when CPU time is noisy).
# Usage: [ROUNDS=3] [LINK=static|dynamic] [COUNT=0] bench/run.sh [seconds-per-run, default 5]
# (COUNT=0 skips the instruction counts, ~2 minutes.)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-5}
source bench/common.sh
tools=(wrk:wrk nginx:nginx-light curl:curl)
[ "${COUNT:-1}" != 0 ] && tools+=(valgrind:valgrind strip:binutils)
bench_install "${tools[@]}"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

# Both servers are built as the container ships authmock (docker/release-flags:
# release, the Swift runtime and Foundation linked statically, no PIE).
# LINK=dynamic measures plain `swift build -c release` builds instead (both
# servers again built alike).
LINK=${LINK:-static}
case "$LINK" in
  static) mapfile -t flags < docker/release-flags ;;
  dynamic) flags=(-c release) ;;
  *) echo "LINK must be static or dynamic" >&2; exit 2 ;;
esac
echo "building release binaries (${flags[*]})..." >&2
bench_build swift build "${flags[@]}" --product authmock
AUTHMOCK="$(swift build "${flags[@]}" --show-bin-path)/authmock"
(cd bench/hello && bench_build swift build "${flags[@]}")
HELLO="$(cd bench/hello && swift build "${flags[@]}" --show-bin-path)/hello"

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT


NGINX_PORT=$(free_port)
cat > "$work/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work; uwsgi_temp_path $work; scgi_temp_path $work;
  server { listen 127.0.0.1:$NGINX_PORT; location / { default_type application/json; return 200 '{"hello":"world"}'; } }
}
CONF
"$NGINX" -c "$work/nginx.conf" -p "$work"
wait_up "http://127.0.0.1:$NGINX_PORT/"

HELLO_PORT=$(free_port)
"$HELLO" "$HELLO_PORT" & pids+=($!)
HELLO_PID=$!
wait_up "http://127.0.0.1:$HELLO_PORT/hello"

# Start to first 200, and RSS when idle (a fresh process, nothing served
# yet): the best of three starts, as a start right after a build reads the
# new binary from disk (a cold start here was 175 ms, warm ones 29-55 ms).
# The binary's cached pages are dropped first: started straight after the
# build wrote it, the same binary idled at 41 MB, and at 35.5 MB once its
# pages had been dropped and read back (the kernel maps more of a freshly
# written file's cached pages per fault). A container runs the latter.
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$AUTHMOCK"
startup_ms=
for _ in 1 2 3; do
  port=$(free_port)
  start_ns=$(date +%s%N)
  "$AUTHMOCK" serve --port "$port" --log-level warning >/dev/null & probe=$!
  until curl -sf -o /dev/null "http://127.0.0.1:$port/health"; do sleep 0.002; done
  ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
  [ -z "$startup_ms" ] || [ "$ms" -lt "$startup_ms" ] && startup_ms=$ms
  idle_rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$probe/status")
  idle_anon_kb=$(awk '/^RssAnon/ {print $2}' "/proc/$probe/status")
  kill "$probe"; wait "$probe" 2>/dev/null || true
done

AUTH_PORT=$(free_port)
# A huge reuse grace lets wrk replay one refresh token while every request
# still takes the full rotation path (new refresh token, new access token).
"$AUTHMOCK" serve --port "$AUTH_PORT" --log-level warning --access-ttl 3600 --reuse-grace 1000000000 >/dev/null & pids+=($!)
AUTH_PID=$!
until curl -sf -o /dev/null "http://127.0.0.1:$AUTH_PORT/health"; do sleep 0.002; done
LOGIN=$(curl -s -u demo:demo-secret -d grant_type=password -d username=alice -d password=wonderland "http://127.0.0.1:$AUTH_PORT/oauth/token")
ACCESS=$(echo "$LOGIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
REFRESH=$(echo "$LOGIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refresh_token"])')
cat > "$work/refresh.lua" <<LUA
wrk.method = "POST"
wrk.body = "grant_type=refresh_token&refresh_token=$REFRESH"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic ZGVtbzpkZW1vLXNlY3JldA=="
LUA

# Resident memory of the processes, in kB.
rss_kb() { local total=0 pid; for pid in "$@"; do total=$(( total + $(awk '/^VmRSS/ {print $2}' "/proc/$pid/status") )); done; echo "$total"; }

# run NAME "PIDS" URL [wrk args...] -> "rps p99 cpu_us_per_request rss_kb"
run() {
  local name=$1 server_pids=$2 url=$3; shift 3
  local before after requests
  # shellcheck disable=SC2086
  before=$(cpu_ticks $server_pids)
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" --latency "$@" "$url" > "$work/$name.txt"
  # shellcheck disable=SC2086
  after=$(cpu_ticks $server_pids)
  local rps p99 non2xx
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/$name.txt")
  p99=$(awk '$1=="99%" {print $2}' "$work/$name.txt")
  requests=$(awk '/requests in/ {print $1}' "$work/$name.txt")
  non2xx=$(awk '/Non-2xx/ {print $5}' "$work/$name.txt")
  if [ -n "$non2xx" ]; then echo "$name: $non2xx non-2xx answers, the run is invalid" >&2; cat "$work/$name.txt" >&2; exit 1; fi
  # shellcheck disable=SC2086
  echo "$rps $p99 $(python3 -c "print(f'{($after - $before) / $TICK / $requests * 1e6:.1f}')") $(rss_kb $server_pids)"
}

NGINX_PIDS="$(cat "$work/nginx.pid") $(pgrep -P "$(cat "$work/nginx.pid")" | tr '\n' ' ')"
# Rounds interleave the targets, so each ratio compares runs minutes apart
# at most; the medians over rounds are what is printed.
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round of $ROUNDS..." >&2
  # An assignment fails with its command substitution, so an invalid run (a
  # non-2xx answer) stops the script under set -e.
  result=$(run nginx "$NGINX_PIDS" "http://127.0.0.1:$NGINX_PORT/"); echo "nginx $result" >> "$work/results"
  result=$(run bare "$HELLO_PID" "http://127.0.0.1:$HELLO_PORT/hello"); echo "bare $result" >> "$work/results"
  result=$(run hello "$HELLO_PID" "http://127.0.0.1:$HELLO_PORT/hello" -H "Authorization: Bearer $ACCESS"); echo "hello $result" >> "$work/results"
  result=$(run me "$AUTH_PID" "http://127.0.0.1:$AUTH_PORT/api/me" -H "Authorization: Bearer $ACCESS"); echo "me $result" >> "$work/results"
  result=$(run refresh "$AUTH_PID" "http://127.0.0.1:$AUTH_PORT/oauth/token" -s "$work/refresh.lua"); echo "refresh $result" >> "$work/results"
done

python3 - "$work/results" "$SECONDS_PER_RUN" "$CONNECTIONS" "$ROUNDS" "$startup_ms" "$idle_rss_kb" "$idle_anon_kb" "$LINK" <<'PY'
import os, statistics, sys
path, secs, conns, rounds, startup_ms, idle_rss, idle_anon, link = sys.argv[1:]
runs = {}
for line in open(path):
    name, rps, p99, cpu, rss = line.split()
    runs.setdefault(name, []).append((float(rps), p99, float(cpu), int(rss) / 1024))
med = statistics.median
print(f"wrk, {rounds} rounds of {secs} s per target, {conns} connections, 127.0.0.1, {os.cpu_count()} cores; medians over rounds")
print("servers built " + ("as the container's binary (docker/release-flags)" if link == "static" else "by swift build -c release (shared Swift runtime)"))
print(f"{'target':<32}{'CPU us/req':>11}{'requests/s':>12}{'p99':>10}{'RSS MB':>9}")
names = {"nginx": "nginx static 200", "bare": "hello-world, no Authorization", "hello": "hello-world, same request", "me": "authmock GET /api/me", "refresh": "authmock refresh_token grant"}
for key, name in names.items():
    r = runs[key]
    p99 = sorted(r, key=lambda x: x[0])[len(r) // 2][1]
    print(f"{name:<32}{med(x[2] for x in r):>11.1f}{med(x[0] for x in r):>12.0f}{p99:>10}{r[-1][3]:>9.1f}")
print()
cpu_ratio = [m[2] / h[2] for m, h in zip(runs["me"], runs["hello"])]
rps_ratio = [m[0] / h[0] for m, h in zip(runs["me"], runs["hello"])]
spread = lambda xs: f"(rounds {min(xs):.2f}-{max(xs):.2f})"
print("ratios against the hello-world sent the same request (its Authorization header too)")
print(f"/api/me CPU per request / hello-world   {med(cpu_ratio):6.2f}   (target <= 1.2) {spread(cpu_ratio)}")
print(f"/api/me requests/s / hello-world        {med(rps_ratio):6.2f}   (target >= 0.85) {spread(rps_ratio)}")
print(f"refresh grants per second               {med(x[0] for x in runs['refresh']):6.0f}   (target >= 9000, 30x oidc-provider-mock's ~300/s)")
print(f"authmock start to first 200             {int(startup_ms):6d} ms (target < 80)")
print(f"authmock idle RSS                       {int(idle_rss) / 1024:6.1f} MB (target < 40; {int(idle_anon) / 1024:.1f} MB of it anonymous, the rest mapped binary and libraries)")
PY

# Instructions per request, counted by callgrind (user space only; the same
# on every run to a fraction of a percent). Debug info is stripped from
# copies of the binaries first: valgrind 3.19 cannot read Swift 6.3's DWARF 5,
# and counting needs only the symbols. Each server takes 300 requests to
# warm up, then 1,000 and 2,000 more on one keep-alive connection, its
# counters dumped after each batch: the difference of the last two batches
# over 1,000 is the cost of one request (a sign-in or a connection's setup,
# in every batch alike, cancels out).
if [ "${COUNT:-1}" != 0 ]; then
  echo "counting instructions per request (callgrind, about two minutes)..." >&2
  cat > "$work/load.py" <<'PY'
import http.client, json, sys, time
port, count, path, token = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
for _ in range(900):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        c.request("GET", path, headers={"Authorization": "Bearer x"}); c.getresponse().read(); break
    except OSError:
        time.sleep(0.2)
else:
    sys.exit(f"port {port} never answered")
if token == "login":
    c.request("POST", "/oauth/token", body="grant_type=password&username=alice&password=wonderland",
              headers={"Authorization": "Basic ZGVtbzpkZW1vLXNlY3JldA==", "Content-Type": "application/x-www-form-urlencoded"})
    token = json.loads(c.getresponse().read())["access_token"]
for _ in range(count):
    c.request("GET", path, headers={"Authorization": "Bearer " + token}); r = c.getresponse(); r.read()
    if r.status != 200: sys.exit(f"{path}: {r.status}")
PY
  # instructions NAME BINARY PATH TOKEN SERVER-ARGS... -> instructions per request
  instructions() {
    local name=$1 binary=$2 path=$3 token=$4; shift 4
    cp "$binary" "$work/$name-stripped" && strip --strip-debug "$work/$name-stripped"
    local port; port=$(free_port)
    valgrind --tool=callgrind --callgrind-out-file="$work/cg-$name.%p" "$work/$name-stripped" "${@//PORT/$port}" >"$work/vg-$name.log" 2>&1 &
    local vg=$!
    # The watchdog's output goes nowhere: its sleep would otherwise hold
    # this function's command substitution open for the full 10 minutes.
    ( sleep 600; kill "$vg" 2>/dev/null ) </dev/null >/dev/null 2>&1 & local watchdog=$!
    for count in 300 1000 2000; do
      python3 "$work/load.py" "$port" "$count" "$path" "$token" || { cat "$work/vg-$name.log" >&2; exit 1; }
      callgrind_control -d "$vg" >/dev/null
    done
    kill -INT "$vg"; wait "$vg" 2>/dev/null || true; pkill -P "$watchdog" sleep 2>/dev/null || true
    python3 - "$work" "$name" <<'PY'
import glob, re, sys
work, name = sys.argv[1:]
dumps = sorted(glob.glob(f"{work}/cg-{name}.*.[0-9]*"), key=lambda f: int(f.rsplit(".", 1)[1]))
totals = [int(re.search(r"^totals: (\d+)", open(f).read(), re.M).group(1)) for f in dumps]
print(round((totals[2] - totals[1]) / 1000))
PY
  }
  hello_ir=$(instructions hello "$HELLO" /hello "$ACCESS" PORT)
  me_ir=$(instructions me "$AUTHMOCK" /api/me login serve --port PORT --log-level warning --access-ttl 3600)
  python3 - "$hello_ir" "$me_ir" <<'PY'
import sys
hello, me = (int(x) for x in sys.argv[1:])
print()
print("instructions per request (callgrind, user space; repeatable to ~0.5 %)")
print(f"hello-world, same request               {hello:8,d}")
print(f"authmock GET /api/me                    {me:8,d}")
print(f"/api/me / hello-world                   {me / hello:8.3f}")
PY
fi
