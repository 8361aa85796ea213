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

# The live console (docs/proxy.md): `authmock proxy --judge` in front of the
# real SimpleJWT server of the tests, a client without single flight through
# it (two refreshes of one token at once, then a call with the old token).
exec 3< <(sleep 600)
stdin_holder=$!
python3 Tests/EndToEndTests/Fixtures/simplejwt-server.py <&3 > "$work/simplejwt.out" 2>/dev/null &
backend=$!
for _ in $(seq 1 100); do [ -s "$work/simplejwt.out" ] && break; sleep 0.1; done
upstream="http://127.0.0.1:$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["port"])' "$work/simplejwt.out")"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$bin/authmock" proxy --upstream "$upstream" --profile simplejwt --port "$port" --expire-after 30s --judge --log-level error >/dev/null &
proxy=$!
trap 'kill $proxy $backend $stdin_holder 2>/dev/null || true; rm -rf "$work"' EXIT
proxied="http://127.0.0.1:$port"
until curl -sf -o /dev/null "$proxied/_authmock/clock"; do sleep 0.1; done
json='Content-Type: application/json'
pair=$(curl -s -X POST "$proxied/api/token/" -H "$json" -d '{"username": "alice", "password": "wonderland"}')
access=$(echo "$pair" | python3 -c 'import json, sys; print(json.load(sys.stdin)["access"])')
refresh=$(echo "$pair" | python3 -c 'import json, sys; print(json.load(sys.stdin)["refresh"])')
curl -s -o /dev/null "$proxied/api/me" -H "Authorization: Bearer $access"
curl -s -o /dev/null -X POST "$proxied/_authmock/clock/advance" -H "$json" -d '{"seconds": 31}'
curl -s -o /dev/null "$proxied/api/me" -H "Authorization: Bearer $access"
for _ in 1 2; do curl -s -o /dev/null -X POST "$proxied/api/token/refresh/" -H "$json" -d "{\"refresh\": \"$refresh\"}" & done
sleep 1
curl -s -o /dev/null "$proxied/api/me" -H "Authorization: Bearer $access"
# Its event stream never ends, so Chromium's own --screenshot would wait for
# it: the page is taken over the DevTools protocol once it has drawn.
printf '%s\n' '{"wait": "document.querySelector(\"#timeline svg\") !== null && document.getElementById(\"verdict\").dataset.verdict === \"fail\""}' \
  "{\"screenshot\": \"$PWD/docs/images/console.png\"}" '{"quit": true}' |
  python3 Tests/EndToEndTests/Fixtures/browser.py "$(command -v chromium)" "$proxied/_authmock/console" >/dev/null
echo "docs/images/console.png"
