#!/usr/bin/env bash
# Throughput of authmock against two references, measured in one run on this
# machine, all on 127.0.0.1 and bounded in time:
#   nginx      a static 200: the ceiling for a tiny HTTP answer here
#   hello      a Hummingbird hello-world route: the framework's own floor
#   /api/me    authmock with a valid token (signature cached, clock and
#              revocation checked on every request)
#   refresh    authmock refresh_token grants with rotation on
# Prints, per target, the server's CPU time per request (from /proc/PID/stat
# over the run: steadier than requests/s on a shared machine, so it is the
# headline), requests/s, p99 and RSS, then the ratios the project targets,
# and authmock's start-to-first-200 time and idle RSS.
# Usage: bench/run.sh [seconds-per-run, default 10]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

echo "building release binaries..." >&2
build() { "$@" > "${TMPDIR:-/tmp}/authmock-bench-build.log" 2>&1 || { cat "${TMPDIR:-/tmp}/authmock-bench-build.log" >&2; exit 1; }; }
build swift build -c release --product authmock
AUTHMOCK="$(swift build -c release --show-bin-path)/authmock"
(cd bench/hello && build swift build -c release)
HELLO="$(cd bench/hello && swift build -c release --show-bin-path)/hello"

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 1 100); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; echo "not up: $1" >&2; exit 1; }

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

# Start to first 200, and RSS when idle (a fresh process, nothing served yet).
AUTH_PORT=$(free_port)
start_ns=$(date +%s%N)
# A huge reuse grace lets wrk replay one refresh token while every request
# still takes the full rotation path (new refresh token, new access token).
"$AUTHMOCK" serve --port "$AUTH_PORT" --log-level warning --access-ttl 3600 --reuse-grace 1000000000 >/dev/null & pids+=($!)
AUTH_PID=$!
until curl -sf -o /dev/null "http://127.0.0.1:$AUTH_PORT/health"; do sleep 0.002; done
startup_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
idle_rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$AUTH_PID/status")

LOGIN=$(curl -s -u demo:demo-secret -d grant_type=password -d username=alice -d password=wonderland "http://127.0.0.1:$AUTH_PORT/oauth/token")
ACCESS=$(echo "$LOGIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
REFRESH=$(echo "$LOGIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refresh_token"])')
cat > "$work/refresh.lua" <<LUA
wrk.method = "POST"
wrk.body = "grant_type=refresh_token&refresh_token=$REFRESH"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic ZGVtbzpkZW1vLXNlY3JldA=="
LUA

# CPU ticks (user + system) of a process and its children threads' owner group.
cpu_ticks() { local total=0 pid; for pid in "$@"; do total=$(( total + $(awk '{print $14 + $15}' "/proc/$pid/stat") )); done; echo "$total"; }
rss_kb() { local total=0 pid; for pid in "$@"; do total=$(( total + $(awk '/^VmRSS/ {print $2}' "/proc/$pid/status") )); done; echo "$total"; }
TICK=$(getconf CLK_TCK)

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
read -r nginx_rps nginx_p99 nginx_cpu nginx_rss < <(run nginx "$NGINX_PIDS" "http://127.0.0.1:$NGINX_PORT/")
read -r hello_rps hello_p99 hello_cpu hello_rss < <(run hello "$HELLO_PID" "http://127.0.0.1:$HELLO_PORT/hello")
read -r me_rps me_p99 me_cpu me_rss < <(run me "$AUTH_PID" "http://127.0.0.1:$AUTH_PORT/api/me" -H "Authorization: Bearer $ACCESS")
read -r refresh_rps refresh_p99 refresh_cpu refresh_rss < <(run refresh "$AUTH_PID" "http://127.0.0.1:$AUTH_PORT/oauth/token" -s "$work/refresh.lua")

python3 - "$nginx_rps" "$hello_rps" "$me_rps" "$refresh_rps" "$nginx_p99" "$hello_p99" "$me_p99" "$refresh_p99" \
  "$nginx_cpu" "$hello_cpu" "$me_cpu" "$refresh_cpu" "$nginx_rss" "$hello_rss" "$me_rss" "$refresh_rss" \
  "$SECONDS_PER_RUN" "$CONNECTIONS" "$startup_ms" "$idle_rss_kb" <<'PY'
import os, sys
a = sys.argv[1:]
rps = list(map(float, a[0:4])); p99 = a[4:8]; cpu = list(map(float, a[8:12])); rss = [int(x) / 1024 for x in a[12:16]]
secs, conns, startup_ms, idle_rss = a[16], a[17], int(a[18]), int(a[19]) / 1024
print(f"wrk, {secs} s per run, {conns} connections, 127.0.0.1, {os.cpu_count()} cores")
print(f"{'target':<32}{'CPU us/req':>11}{'requests/s':>12}{'p99':>10}{'RSS MB':>9}")
names = ["nginx static 200", "hummingbird hello-world", "authmock GET /api/me", "authmock refresh_token grant"]
for i, name in enumerate(names):
    print(f"{name:<32}{cpu[i]:>11.1f}{rps[i]:>12.0f}{p99[i]:>10}{rss[i]:>9.1f}")
print()
print(f"/api/me CPU per request / hello-world   {cpu[2] / cpu[1]:6.2f}   (target <= 1.2)")
print(f"/api/me requests/s / hello-world        {rps[2] / rps[1]:6.2f}   (target >= 0.85)")
print(f"refresh grants per second               {rps[3]:6.0f}   (target >= 9000, 30x oidc-provider-mock's ~300/s)")
print(f"authmock start to first 200             {startup_ms:6d} ms (target < 80)")
print(f"authmock idle RSS                       {idle_rss:6.1f} MB (target < 40)")
PY
