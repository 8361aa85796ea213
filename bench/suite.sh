#!/usr/bin/env bash
# How long the built-in suite takes against the reference client
# (authmock-reference-driver, one process per case run), and the CPU the
# runner and its drivers use, at the default concurrency and at others:
# the wall time a user waits for `authmock run`, which is mostly cases
# waiting (held requests, quiet periods, client clocks), not CPU.
# Usage: [ROUNDS=3] [JOBS="default 32 64"] bench/suite.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
JOBS=${JOBS:-"default 32 64"}
authmock=$(bench_release_authmock)
mapfile -t flags < docker/release-flags
bench_build swift build "${flags[@]}" --product authmock-reference-driver
driver="$(dirname "$authmock")/authmock-reference-driver"

# One run: wall seconds, CPU seconds of the runner and every driver it started, and the verdict line.
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.monotonic() - start
used = resource.getrusage(resource.RUSAGE_CHILDREN)
summary = [line for line in run.stdout.splitlines() if " passed, " in line]
print(f"{wall:.1f} {used.ru_utime + used.ru_stime:.1f} {run.returncode} {summary[-1] if summary else run.stderr.strip()[-200:]}")
PY
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "the built-in suite, reference client, $(nproc) cores, $ROUNDS rounds (medians)"
printf '%-10s %10s %10s  %s\n' jobs "wall s" "CPU s" verdicts
for jobs in $JOBS; do
  walls=() cpus=() last=""
  for _ in $(seq "$ROUNDS"); do
    args=(run --driver "$driver")
    [ "$jobs" = default ] || args+=(--jobs "$jobs")
    read -r wall cpu status verdicts < <(measure "$authmock" "${args[@]}")
    [ "$status" = 0 ] || { echo "--jobs $jobs: exit $status: $verdicts" >&2; exit 1; }
    walls+=("$wall") cpus+=("$cpu") last=$verdicts
  done
  printf '%-10s %10s %10s  %s\n' "$jobs" "$(printf '%s\n' "${walls[@]}" | median)" "$(printf '%s\n' "${cpus[@]}" | median)" "$last"
done
