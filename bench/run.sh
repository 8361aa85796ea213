#!/usr/bin/env bash
# Throughput of authmock against two references, measured in one run on this
# machine, all on 127.0.0.1 and bounded in time:
#   nginx      a static 200: the ceiling for a tiny HTTP answer here
#   hello      a Hummingbird hello-world route: the framework's own floor
#   /api/me    authmock with a valid token (signature cached, clock and
#              revocation checked on every request)
#   refresh    authmock refresh_token grants with rotation on
# Prints requests/s, p99 latency and the ratios the project targets.
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
wait_up "http://127.0.0.1:$HELLO_PORT/hello"

AUTH_PORT=$(free_port)
# A huge reuse grace lets wrk replay one refresh token while every request
# still takes the full rotation path (new refresh token, new access token).
"$AUTHMOCK" serve --port "$AUTH_PORT" --log-level warning --access-ttl 3600 --reuse-grace 1000000000 >/dev/null & pids+=($!)
wait_up "http://127.0.0.1:$AUTH_PORT/health"
LOGIN=$(curl -s -u demo:demo-secret -d grant_type=password -d username=alice -d password=wonderland "http://127.0.0.1:$AUTH_PORT/oauth/token")
ACCESS=$(echo "$LOGIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
REFRESH=$(echo "$LOGIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refresh_token"])')
cat > "$work/refresh.lua" <<LUA
wrk.method = "POST"
wrk.body = "grant_type=refresh_token&refresh_token=$REFRESH"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic ZGVtbzpkZW1vLXNlY3JldA=="
LUA

# run NAME URL [wrk args...] -> "rps p99ms"
run() {
  local name=$1 url=$2; shift 2
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" --latency "$@" "$url" > "$work/$name.txt"
  local rps p99 non2xx
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/$name.txt")
  p99=$(awk '$1=="99%" {print $2}' "$work/$name.txt")
  non2xx=$(awk '/Non-2xx/ {print $5}' "$work/$name.txt")
  if [ -n "$non2xx" ]; then echo "$name: $non2xx non-2xx answers, the run is invalid" >&2; cat "$work/$name.txt" >&2; exit 1; fi
  echo "$rps $p99"
}

read -r nginx_rps nginx_p99 < <(run nginx "http://127.0.0.1:$NGINX_PORT/")
read -r hello_rps hello_p99 < <(run hello "http://127.0.0.1:$HELLO_PORT/hello")
read -r me_rps me_p99 < <(run me "http://127.0.0.1:$AUTH_PORT/api/me" -H "Authorization: Bearer $ACCESS")
read -r refresh_rps refresh_p99 < <(run refresh "http://127.0.0.1:$AUTH_PORT/oauth/token" -s "$work/refresh.lua")

python3 - "$nginx_rps" "$hello_rps" "$me_rps" "$refresh_rps" "$nginx_p99" "$hello_p99" "$me_p99" "$refresh_p99" "$SECONDS_PER_RUN" "$CONNECTIONS" <<'PY'
import sys
nginx, hello, me, refresh = map(float, sys.argv[1:5])
p99 = sys.argv[5:9]
secs, conns = sys.argv[9], sys.argv[10]
print(f"wrk, {secs} s per run, {conns} connections, 127.0.0.1, {__import__('os').cpu_count()} cores")
print(f"{'target':<34}{'requests/s':>12}{'p99':>10}")
for name, rps, lat in [("nginx static 200", nginx, p99[0]), ("hummingbird hello-world", hello, p99[1]),
                       ("authmock GET /api/me", me, p99[2]), ("authmock refresh_token grant", refresh, p99[3])]:
    print(f"{name:<34}{rps:>12.0f}{lat:>10}")
print()
print(f"hello-world / nginx            {hello / nginx:6.2f}")
print(f"/api/me / hello-world          {me / hello:6.2f}   (target >= 0.80)")
print(f"refresh / 300 req/s            {refresh / 300:6.1f}x  (target >= 20x oidc-provider-mock's ~300/s)")
PY
