#!/usr/bin/env bash
# Refresh grants per second with each token store (--state), in one run on
# this machine, all on 127.0.0.1 and bounded in time: memory (the default),
# a SQLite file, and PostgreSQL (a throwaway server from Debian's package,
# started by scripts/postgres.sh). Prints per store requests/s, p99, the
# server's CPU per grant (and PostgreSQL's own, from its processes), and
# the ratio to memory, as medians over ROUNDS interleaved rounds.
# Usage: [ROUNDS=3] bench/store.sh [seconds-per-run, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-5}
source bench/common.sh
bench_install wrk:wrk curl:curl
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || bench_install initdb:postgresql
AUTHMOCK=$(bench_release_authmock)

work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  scripts/postgres.sh stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

PG_URL=$(scripts/postgres.sh start "$work/pg" "$(free_port)")
PG_POSTMASTER=$(head -1 "$work/pg/data/postmaster.pid")

# PostgreSQL's CPU: the postmaster's children (one backend per connection).
pg_ticks() { cpu_ticks $(pgrep -P "$PG_POSTMASTER" | tr '\n' ' '); }

declare -A PORT PID
for store in memory sqlite postgres; do
  case $store in
    memory) state=memory ;;
    sqlite) state="sqlite:$work/bench.db" ;;
    postgres) state="$PG_URL" ;;
  esac
  port=$(free_port)
  # A huge reuse grace lets wrk replay one refresh token while every request
  # still takes the full rotation path (a new refresh token and access token).
  "$AUTHMOCK" serve --port "$port" --state "$state" --log-level warning --reuse-grace 1000000000 >/dev/null & pids+=($!)
  PID[$store]=$!
  PORT[$store]=$port
  until curl -sf -o /dev/null "http://127.0.0.1:$port/health"; do sleep 0.01; done
  login=$(curl -s -u demo:demo-secret -d grant_type=password -d username=alice -d password=wonderland "http://127.0.0.1:$port/oauth/token")
  refresh=$(echo "$login" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refresh_token"])')
  cat > "$work/$store.lua" <<LUA
wrk.method = "POST"
wrk.body = "grant_type=refresh_token&refresh_token=$refresh"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic ZGVtbzpkZW1vLXNlY3JldA=="
LUA
done

for round in $(seq 1 "$ROUNDS"); do
  echo "round $round of $ROUNDS..." >&2
  for store in memory sqlite postgres; do
    before=$(cpu_ticks "${PID[$store]}"); pg_before=$(pg_ticks)
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" --latency -s "$work/$store.lua" "http://127.0.0.1:${PORT[$store]}/oauth/token" > "$work/$store.txt"
    after=$(cpu_ticks "${PID[$store]}"); pg_after=$(pg_ticks)
    if grep -q Non-2xx "$work/$store.txt"; then echo "$store: non-2xx answers, the run is invalid" >&2; cat "$work/$store.txt" >&2; exit 1; fi
    rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/$store.txt")
    p99=$(awk '$1=="99%" {print $2}' "$work/$store.txt")
    requests=$(awk '/requests in/ {print $1}' "$work/$store.txt")
    echo "$store $round $rps $p99 $(( after - before )) $(( pg_after - pg_before )) $requests" >> "$work/results"
  done
done

python3 - "$work/results" "$TICK" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
tick = int(sys.argv[2])
by = {}
for store, rnd, rps, p99, ticks, pg, requests in rows:
    by.setdefault(store, []).append((float(rps), p99, int(ticks) / tick / int(requests) * 1e6, int(pg) / tick / int(requests) * 1e6, int(rnd)))
med = statistics.median
memory = {r[4]: r[0] for r in by["memory"]}
print(f"{'store':10} {'grants/s':>9} {'p99':>9} {'server CPU/grant':>17} {'PostgreSQL CPU/grant':>21} {'x memory':>9}")
for store in ["memory", "sqlite", "postgres"]:
    runs = by[store]
    ratio = med(r[0] / memory[r[4]] for r in runs)
    pg = f"{med(r[3] for r in runs):.0f} us" if store == "postgres" else "-"
    print(f"{store:10} {med(r[0] for r in runs):9.0f} {sorted(r[1] for r in runs)[len(runs) // 2]:>9} {med(r[2] for r in runs):14.0f} us {pg:>21} {ratio:9.2f}")
PY
