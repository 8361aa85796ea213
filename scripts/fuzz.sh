#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (-sanitize=fuzzer, in the Swift
# toolchain on Linux) of the token check, the body parsers, the scenario
# loader and GraphQL's request reader, each for SECONDS (default 60), starting from the checked-in seed
# corpus in Tests/Fuzz/TARGET. Fails on any crash, trap or hang (>10 s per
# input); the input that did it is kept in .build/fuzz-findings/. Prints
# executions and coverage per target. scripts/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
# The code under test instrumented, authmock-fuzz linked with libFuzzer
# (Package.swift reads AUTHMOCK_FUZZ); only our modules are rebuilt.
# A failed build is a failure, not an old binary fuzzed again.
if ! build_log="$(AUTHMOCK_FUZZ=1 swift build --product authmock-fuzz 2>&1)"; then
  echo "fuzz: the instrumented build failed:" >&2
  grep -E "error" <<<"$build_log" >&2 || tail -30 <<<"$build_log" >&2
  exit 1
fi
bin="$(swift build --show-bin-path)/authmock-fuzz"
findings=.build/fuzz-findings
mkdir -p "$findings"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# One target per core at a time: each gets a core for its SECONDS.
fuzz() {
  local target="$1"
  mkdir -p "$work/$target"
  cp Tests/Fuzz/"$target"/* "$work/$target/"
  if AUTHMOCK_FUZZ_TARGET="$target" "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$findings/$target-" -print_final_stats=1 "$work/$target" > "$work/$target.log" 2>&1; then
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$' || true)"
    coverage="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$work/$target.log" | grep -o 'cov: [0-9]* ft: [0-9]*' || true)"
    echo "fuzz $target: $runs executions in ${seconds} s, $coverage, corpus $(ls "$work/$target" | wc -l) inputs"
  else
    echo "fuzz $target: FAILED (input kept in $findings/):" >&2
    grep -E "ERROR|SUMMARY|Fatal|crash|deadly|Test unit written" "$work/$target.log" >&2 || tail -30 "$work/$target.log" >&2
    return 1
  fi
}
status=0
cores="$(nproc)"
pids=()
for target in token body scenario graphql; do
  fuzz "$target" & pids+=($!)
  if [ "${#pids[@]}" -ge "$cores" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
# The next `swift build` rebuilds the modules without instrumentation when it needs them.
exit $status
