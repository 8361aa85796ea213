#!/usr/bin/env bash
# Builds the golang.org/x/oauth2 driver offline from Debian's Go packages
# (GOPATH mode: the library comes from /usr/share/gocode).
set -euo pipefail
cd "$(dirname "$0")/.."
# The Debian packages are drivers/go-oauth2/driver.yaml's.
read -r -a packages <<< "$(python3 scripts/drivers.py debian go-oauth2)"
if [ ${#packages[@]} -gt 0 ]; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi
mkdir -p .build
GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="${TMPDIR:-/tmp}/authmock-gocache" \
  go build -o .build/authmock-go-oauth2-driver ./drivers/go-oauth2
echo ".build/authmock-go-oauth2-driver"
