# Sourced by the bench scripts (run from the repository root): the load
# shape, tools from Debian, the release build, ports and CPU time.
# shellcheck shell=bash

ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}

# bench_install COMMAND:PACKAGE...: installs with apt the packages whose command is missing.
bench_install() {
  local need=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null || [ -x "/usr/sbin/${pair%%:*}" ] || need+=("${pair#*:}")
  done
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
}

# bench_build ARGS...: runs a build quietly, printing its log only when it fails.
bench_build() {
  "$@" > "${TMPDIR:-/tmp}/authmock-bench-build.log" 2>&1 || { cat "${TMPDIR:-/tmp}/authmock-bench-build.log" >&2; exit 1; }
}

# Prints the authmock binary built the way the container ships it
# (docker/release-flags: release, the Swift runtime linked statically, no PIE).
bench_release_authmock() {
  local flags
  mapfile -t flags < docker/release-flags
  echo "building a release binary..." >&2
  bench_build swift build "${flags[@]}" --product authmock
  echo "$(swift build "${flags[@]}" --show-bin-path)/authmock"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

TICK=$(getconf CLK_TCK)
# User + system clock ticks of the processes, from /proc (0 for one that is gone).
cpu_ticks() { local total=0 pid; for pid in "$@"; do total=$(( total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0) )); done; echo "$total"; }

# A scratch directory ($work) and the servers a script starts ($pids, add
# with `pids+=($!)`), both gone when the script ends.
bench_scratch() {
  work=$(mktemp -d)
  pids=()
  trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"' EXIT
}

# wait_up URL: until it answers 2xx (10 s at most).
wait_up() { for _ in $(seq 1 100); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; echo "not up: $1" >&2; exit 1; }
