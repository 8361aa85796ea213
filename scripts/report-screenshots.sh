#!/usr/bin/env bash
# Regenerates the run-report screenshots in docs/images/ (docs/report.md):
# the reference client with one bug switched on, its `authmock run --html`
# page, and headless Chromium's picture of it. Needs chromium (Debian's).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product authmock >/dev/null
swift build --product authmock-reference-driver >/dev/null
bin="$(swift build --show-bin-path)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p docs/images
shot() { # name, fault, case, height
  "$bin/authmock" run --no-built-in scenarios --driver "$bin/authmock-reference-driver --fault $2" --case "$3" --profile oauth2 \
    --html "$work/$1.html" >/dev/null || true
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" \
    --window-size=1150,"$4" --screenshot="docs/images/$1.png" "file://$work/$1.html" >/dev/null 2>&1
  echo "docs/images/$1.png"
}
shot report-1.1-refresh-per-401 refresh-per-401 1.1 1250
shot report-9.1-late-refresh-revives-session late-refresh-revives-session 9.1 900
