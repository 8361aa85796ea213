#!/usr/bin/env bash
# A long run at full rate, to show memory follows logins, not refreshes:
# MINUTES (default 10, at most 120) of refresh grants with rotation, each wrk
# thread a client that chains its own refresh tokens (one connection per
# thread, so it always presents the token it was last given), beside GET
# /api/me. Production lifetimes by default: one-hour access tokens, 30-day
# refresh tokens, the server's default retention (`prune_after` 60 s).
# Samples the server's RSS and the journal every 10 s, on 127.0.0.1, release
# build; at the end, a burst of sign-ins measures the bytes a live login
# costs. ACCESS_TTL=5 PRUNE_AFTER=10 makes pruning visible within minutes.
# Usage: [ACCESS_TTL=s] [REFRESH_TTL=s] [PRUNE_AFTER=s] bench/soak.sh [minutes]
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-10}
[ "$MINUTES" -ge 1 ] && [ "$MINUTES" -le 120 ] || { echo "minutes: 1 to 120" >&2; exit 2; }
CLIENTS=${CLIENTS:-8}
ACCESS_TTL=${ACCESS_TTL:-3600}
REFRESH_TTL=${REFRESH_TTL:-2592000}
PRUNE_AFTER=${PRUNE_AFTER:-60}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }

# The container's build (docker/release-flags), as bench/run.sh measures.
mapfile -t flags < docker/release-flags
swift build "${flags[@]}" --product authmock > "${TMPDIR:-/tmp}/authmock-soak-build.log" 2>&1 || { cat "${TMPDIR:-/tmp}/authmock-soak-build.log" >&2; exit 1; }
AUTHMOCK="$(swift build "${flags[@]}" --show-bin-path)/authmock"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# The binary's cached pages dropped first, as bench/run.sh does: a binary
# started straight after the build wrote it maps more of its file per fault
# (41 MB idle against 35.5 MB once read back).
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$AUTHMOCK"
"$AUTHMOCK" serve --port "$PORT" --log-level warning --access-ttl "$ACCESS_TTL" --refresh-ttl "$REFRESH_TTL" --sign-in-access-ttl 86400 --prune-after "$PRUNE_AFTER" >/dev/null & pids+=($!)
SERVER=$!
until curl -sf -o /dev/null "http://127.0.0.1:$PORT/health"; do sleep 0.05; done
BASE="http://127.0.0.1:$PORT"
login() { curl -s -u demo:demo-secret -d grant_type=password -d username=alice -d password=wonderland "$BASE/oauth/token"; }
ACCESS=$(login | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
TOKENS=""
for _ in $(seq "$CLIENTS"); do TOKENS+="\"$(login | python3 -c 'import json,sys; print(json.load(sys.stdin)["refresh_token"])')\","; done
cat > "$work/chain.lua" <<LUA
-- Each thread is one client with its own login; with one connection per
-- thread, answers come back in order, so the next request presents the
-- refresh token the last answer gave.
local tokens = {${TOKENS}}
local next_thread = 1
function setup(thread)
  thread:set("token", tokens[next_thread])
  next_thread = next_thread + 1
end
function request()
  return wrk.format("POST", "/oauth/token", {["Content-Type"] = "application/x-www-form-urlencoded",
    ["Authorization"] = "Basic ZGVtbzpkZW1vLXNlY3JldA=="}, "grant_type=refresh_token&refresh_token=" .. token)
end
function response(status, headers, body)
  local fresh = body:match('"refresh_token":"([^"]+)"')
  if fresh then token = fresh end
end
LUA
DURATION=$((MINUTES * 60))
wrk -t"$CLIENTS" -c"$CLIENTS" -d"${DURATION}s" -s "$work/chain.lua" "$BASE/oauth/token" > "$work/refresh.txt" & pids+=($!)
wrk -t2 -c16 -d"${DURATION}s" -H "Authorization: Bearer $ACCESS" "$BASE/api/me" > "$work/me.txt" & pids+=($!)

echo "soak: $MINUTES min, $CLIENTS refreshing clients + /api/me, access tokens of $ACCESS_TTL s, refresh tokens of $REFRESH_TTL s, prune_after $PRUNE_AFTER s, RSS every 10 s"
printf '%6s %9s %9s %13s %12s\n' "s" "RSS MB" "anon MB" "journal held" "journal KB"
first_minute=""
# Samples by the wall clock (a sample takes time of its own under load).
start=$(date +%s)
next=10
while [ "$next" -le "$DURATION" ]; do
  sleep $(( start + next - $(date +%s) > 0 ? start + next - $(date +%s) : 0 ))
  rss=$(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$SERVER/status")
  anon=$(awk '/^RssAnon/ {printf "%.1f", $2 / 1024}' "/proc/$SERVER/status")
  echo "$rss" >> "$work/rss"
  journal=$(curl -s -m 5 "$BASE/_authmock/journal?since=999999999999" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["held"], j["heldBytes"] // 1024)' 2>/dev/null || echo "? ?")
  printf '%6d %9s %9s %13s %12s\n' "$next" "$rss" "$anon" "${journal%% *}" "${journal##* }"
  [ "$next" -eq 60 ] && first_minute=$rss
  next=$(( next + 10 ))
done
wait "${pids[1]}" "${pids[2]}" 2>/dev/null || true
end_rss=$(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$SERVER/status")
refreshes=$(awk '/requests in/ {print $1}' "$work/refresh.txt")
pruned=$(curl -s -X POST "$BASE/_authmock/tokens/prune" | python3 -c 'import json,sys; t=json.load(sys.stdin)["total"]; print("%d access, %d refresh, %d logins in %d passes" % (t["access"], t["refresh"], t["families"], t["passes"]))')
echo "pruned: $pruned"
echo "refresh grants: $refreshes ($(awk '/^Requests\/sec:/ {print $2}' "$work/refresh.txt")/s); /api/me: $(awk '/^Requests\/sec:/ {print $2}' "$work/me.txt")/s"
python3 - "${first_minute:-$end_rss}" "$end_rss" "$work/rss" <<'PY'
import statistics, sys
first, end = float(sys.argv[1]), float(sys.argv[2])
samples = [float(line) for line in open(sys.argv[3])]
print(f"RSS after 1 min {first:.1f} MB, at the end {end:.1f} MB: {end / first:.2f}x (target <= 1.5x, and < 150 MB)")
print(f"RSS over the run, min / median / max: {min(samples):.1f} / {statistics.median(samples):.1f} / {max(samples):.1f} MB")
PY

# Bytes per live login: RSS before and after 5 s of sign-ins (each a new
# login with its refresh token and access token), the refresh load stopped.
cat > "$work/signin.lua" <<'LUA'
function request()
  return wrk.format("POST", "/oauth/token", {["Content-Type"] = "application/x-www-form-urlencoded",
    ["Authorization"] = "Basic ZGVtbzpkZW1vLXNlY3JldA=="}, "grant_type=password&username=alice&password=wonderland")
end
LUA
before=$(awk '/^VmRSS/ {print $2}' "/proc/$SERVER/status")
wrk -t2 -c8 -d5s -s "$work/signin.lua" "$BASE/oauth/token" > "$work/signin.txt"
after=$(awk '/^VmRSS/ {print $2}' "/proc/$SERVER/status")
logins=$(awk '/requests in/ {print $1}' "$work/signin.txt")
live=$(curl -s "$BASE/_authmock/tokens" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["families"]))')
echo "sign-ins: $logins new logins ($live live): RSS $((before / 1024)) -> $((after / 1024)) MB, $(( (after - before) * 1024 / logins )) bytes per live login"
