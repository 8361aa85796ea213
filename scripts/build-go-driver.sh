#!/usr/bin/env bash
# Builds the golang.org/x/oauth2 driver offline from Debian's Go packages
# (GOPATH mode: the library comes from /usr/share/gocode).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null || [ ! -d /usr/share/gocode/src/golang.org/x/oauth2 ]; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go golang-golang-x-oauth2-dev >/dev/null
fi
mkdir -p .build
GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="${TMPDIR:-/tmp}/authmock-gocache" \
  go build -o .build/authmock-go-oauth2-driver ./drivers/go-oauth2
echo ".build/authmock-go-oauth2-driver"
