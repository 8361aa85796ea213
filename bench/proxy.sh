#!/usr/bin/env bash
# What `authmock proxy` adds in front of a backend, measured side by side in
# one run, all on 127.0.0.1 and bounded in time. The backend is the
# Hummingbird hello-world (bench/hello), so what is measured is the proxy,
# not the backend:
#   direct     wrk -> hello-world
#   proxied    wrk -> authmock proxy -> hello-world
#   forwarded  wrk -> a bare forwarder -> hello-world (bench/hello --forward:
#              Hummingbird and AsyncHTTPClient and nothing else, the floor of
#              any proxy built on them: two HTTP exchanges per request)
# each sent the same request (an Authorization header the proxy looks up and
# forwards). Prints, as medians over ROUNDS rounds that interleave the two:
#   latency    p50 and p99 with one connection (a request at a time: what a
#              person tapping through an app meets), and what the proxy adds;
#   CPU        the proxy's CPU time per proxied request under load
#              (CONNECTIONS connections, from /proc/PID/stat: steadier than
#              requests/s on a shared machine), against the hello-world's
#              own per request, the framework's floor, and against the bare
#              forwarder's, the floor of a proxy: what authmock's own work
#              (journal, token lookup, faults) adds is the second ratio.
# Usage: [ROUNDS=3] bench/proxy.sh [seconds-per-run, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-5}
source bench/common.sh
bench_install wrk:wrk curl:curl
AUTHMOCK=$(bench_release_authmock)
mapfile -t flags < docker/release-flags
(cd bench/hello && bench_build swift build "${flags[@]}")
HELLO="$(cd bench/hello && swift build "${flags[@]}" --show-bin-path)/hello"

bench_scratch

HELLO_PORT=$(free_port)
"$HELLO" "$HELLO_PORT" & pids+=($!)
HELLO_PID=$!
wait_up "http://127.0.0.1:$HELLO_PORT/hello"
FORWARD_PORT=$(free_port)
"$HELLO" "$FORWARD_PORT" --forward "$HELLO_PORT" & pids+=($!)
FORWARD_PID=$!
wait_up "http://127.0.0.1:$FORWARD_PORT/hello"
PROXY_PORT=$(free_port)
"$AUTHMOCK" proxy --upstream "http://127.0.0.1:$HELLO_PORT" --port "$PROXY_PORT" --log-level warning >/dev/null & pids+=($!)
PROXY_PID=$!
wait_up "http://127.0.0.1:$PROXY_PORT/hello"

# run NAME PID URL CONNECTIONS -> "p50_ms p99_ms cpu_us_per_request requests"
run() {
  local name=$1 pid=$2 url=$3 connections=$4 before after
  before=$(cpu_ticks "$pid")
  wrk -t1 -c"$connections" -d"${SECONDS_PER_RUN}s" --latency -H "Authorization: Bearer bench" "$url" > "$work/$name.txt"
  after=$(cpu_ticks "$pid")
  if grep -q "Non-2xx" "$work/$name.txt"; then echo "$name: non-2xx answers, the run is invalid" >&2; cat "$work/$name.txt" >&2; exit 1; fi
  python3 - "$work/$name.txt" "$before" "$after" "$TICK" <<'PY'
import re, sys
text, before, after, tick = open(sys.argv[1]).read(), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def ms(label):
    value, unit = re.search(rf"^\s+{label}\s+([\d.]+)(us|ms|s)$", text, re.M).groups()
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
requests = int(re.search(r"(\d+) requests in", text).group(1))
print(f"{ms('50%'):.3f} {ms('99%'):.3f} {(after - before) / tick / requests * 1e6:.1f} {requests}")
PY
}

for round in $(seq 1 "$ROUNDS"); do
  echo "round $round of $ROUNDS..." >&2
  echo "direct-latency $(run direct-latency "$HELLO_PID" "http://127.0.0.1:$HELLO_PORT/hello" 1)" >> "$work/results"
  echo "proxied-latency $(run proxied-latency "$PROXY_PID" "http://127.0.0.1:$PROXY_PORT/hello" 1)" >> "$work/results"
  echo "direct-load $(run direct-load "$HELLO_PID" "http://127.0.0.1:$HELLO_PORT/hello" "$CONNECTIONS")" >> "$work/results"
  echo "proxied-load $(run proxied-load "$PROXY_PID" "http://127.0.0.1:$PROXY_PORT/hello" "$CONNECTIONS")" >> "$work/results"
  echo "forwarded-load $(run forwarded-load "$FORWARD_PID" "http://127.0.0.1:$FORWARD_PORT/hello" "$CONNECTIONS")" >> "$work/results"
done

python3 - "$work/results" "$SECONDS_PER_RUN" "$CONNECTIONS" "$ROUNDS" <<'PY'
import os, statistics, sys
path, secs, conns, rounds = sys.argv[1:]
runs = {}
for line in open(path):
    name, p50, p99, cpu, requests = line.split()
    runs.setdefault(name, []).append((float(p50), float(p99), float(cpu), int(requests)))
med = statistics.median
spread = lambda xs: f"(rounds {min(xs):.2f}-{max(xs):.2f})"
print(f"wrk, {rounds} rounds of {secs} s per run, 127.0.0.1, {os.cpu_count()} cores; medians over rounds")
print("backend: the Hummingbird hello-world (bench/hello); both built as the container's binary (docker/release-flags)")
print()
print(f"{'one connection':<28}{'p50 ms':>10}{'p99 ms':>10}")
for key, name in (("direct-latency", "direct"), ("proxied-latency", "through authmock proxy")):
    print(f"{name:<28}{med(r[0] for r in runs[key]):>10.3f}{med(r[1] for r in runs[key]):>10.3f}")
added50 = [p[0] - d[0] for p, d in zip(runs["proxied-latency"], runs["direct-latency"])]
added99 = [p[1] - d[1] for p, d in zip(runs["proxied-latency"], runs["direct-latency"])]
print(f"{'added by the proxy':<28}{med(added50):>10.3f}{med(added99):>10.3f}   (target: p50 <= 1 ms) {spread(added50)}")
print()
print(f"{conns} connections: CPU time per request")
hello = [r[2] for r in runs["direct-load"]]
proxy = [r[2] for r in runs["proxied-load"]]
print(f"{'hello-world, direct':<28}{med(hello):>10.1f} us")
print(f"{'authmock proxy':<28}{med(proxy):>10.1f} us   (the proxy's own process; the backend's is apart)")
ratio = [p / h for p, h in zip(proxy, hello)]
print(f"{'proxy / hello-world':<28}{med(ratio):>10.2f}      (target <= 1.2) {spread(ratio)}")
forward = [r[2] for r in runs["forwarded-load"]]
print(f"{'bare forwarder':<28}{med(forward):>10.1f} us   (Hummingbird + AsyncHTTPClient, no authmock: a proxy's floor)")
floor = [f / h for f, h in zip(forward, hello)]
print(f"{'bare forwarder / hello-world':<28}{med(floor):>10.2f}      {spread(floor)}")
over = [p / f for p, f in zip(proxy, forward)]
print(f"{'proxy / bare forwarder':<28}{med(over):>10.2f}      (authmock's own work) {spread(over)}")
PY
