#!/usr/bin/env bash
# Regenerates docs/compatibility.md and docs/compatibility.html: the reference
# client and every driver whose drivers/NAME/driver.yaml has a command,
# through the whole suite. Installs and builds what they need.
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a pip_missing <<< "$(python3 scripts/drivers.py pip)"
[ ${#pip_missing[@]} -eq 0 ] || python3 -m pip install --quiet "${pip_missing[@]}"
mapfile -t builds < <(python3 scripts/drivers.py builds)
for line in "${builds[@]}"; do
  # shellcheck disable=SC2086 # the build command's words
  ${line#*$'\t'} >/dev/null
done
swift build --product authmock >/dev/null
for product in authmock-reference-driver $(python3 scripts/drivers.py products); do
  swift build --product "$product" >/dev/null
done
bin="$(swift build --show-bin-path)"
args=(--driver "reference=$bin/authmock-reference-driver")
while IFS= read -r arg; do
  args+=("$arg")
done < <(python3 scripts/drivers.py matrix-args "$bin")
# JOBS: case runs at once (default: authmock's, 32 per core); most of a case is waiting.
[ -z "${JOBS:-}" ] || args+=(--jobs "$JOBS")
"$bin/authmock" matrix scenarios/ "${args[@]}" --markdown docs/compatibility.md --html docs/compatibility.html
