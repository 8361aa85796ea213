#!/usr/bin/env bash
# Installs what the test suite needs on a fresh machine, builds, and runs
# every test. README.md's second command; .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step says how long it took (the budget: all of .ci/run in 30 minutes on 2 cores).
timed() {
  local name="$1" start=$SECONDS
  shift
  "$@"
  echo "== step: $name took $(( SECONDS - start )) s"
}

# System packages the suite uses, installed only when missing.
need_apt=()
for pair in "git:git" "python3:python3" "curl:curl" "go:golang-go" "chromium:chromium" "node:nodejs"; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need_apt+=("${pair#*:}")
done
# Client libraries the drivers in drivers/ wrap, by a file each installs: the
# browser recipes and drivers/node-axios load axios's build from here.
# SQLite's headers (GRDB, --state sqlite:) and PostgreSQL (the --state postgres:// tests).
for pair in "/usr/include/sqlite3.h:libsqlite3-dev" \
    "/usr/share/nodejs/axios/dist/axios.min.js:node-axios" \
    "/usr/lib/ruby/vendor_ruby/oauth2.rb:ruby-oauth2" \
    "/usr/share/perl5/LWP/Authen/OAuth2.pm:liblwp-authen-oauth2-perl"; do
  [ -f "${pair%%:*}" ] || need_apt+=("${pair#*:}")
done
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" golang-golang-x-oauth2-dev
  else
    echo "missing: ${need_apt[*]} (install them, or run as root to let this script do it)" >&2
    exit 1
  fi
fi
command -v swift >/dev/null 2>&1 || { echo "swift is not on PATH: install Swift 6.2 or later" >&2; exit 1; }

# Python packages the tests use: an independent JSON Schema validator for the
# scenario schema (with YAML to read scenarios), the client libraries the
# drivers in drivers/ wrap, schemathesis for the OpenAPI contract, and the
# real SimpleJWT server the simplejwt dialect is compared with.
if ! python3 -c "import yaml, jsonschema, authlib, joserfc, httpx, requests_oauthlib, gql, google.auth, requests_oauth2client, schemathesis, rest_framework_simplejwt" 2>/dev/null; then
  packages=(pyyaml jsonschema authlib joserfc httpx requests-oauthlib gql google-auth requests-oauth2client schemathesis
    django djangorestframework djangorestframework-simplejwt)
  python3 -m pip install --quiet "${packages[@]}" 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages "${packages[@]}"
fi

# Formatting (.swift-format): the toolchain's swift-format, strict, before anything is built.
if swift format --version >/dev/null 2>&1; then
  timed "format lint" swift format lint --strict --recursive Sources Tests Package.swift
else
  echo "swift format is not in this toolchain (Swift 6 ships it): formatting not checked" >&2
fi
timed "swift build" swift build --build-tests
# The Go, Java and Rust drivers are built from Debian's packages (the tests run them).
timed "go driver" scripts/build-go-driver.sh
timed "rust driver" scripts/build-rust-driver.sh
timed "java-okhttp driver" scripts/build-java-driver.sh java-okhttp
timed "java-google-oauth-client driver" scripts/build-java-driver.sh java-google-oauth-client
# A throwaway PostgreSQL on loopback for the --state postgres:// tests (three
# replicas on one database), stopped when this script ends.
pgdir="$(mktemp -d)"
trap 'scripts/postgres.sh stop "$pgdir" >/dev/null 2>&1 || true; rm -rf "$pgdir"' EXIT
# A free port unless one is given: another PostgreSQL (a developer's own, a
# leftover run) may hold the usual ones.
pgport="${AUTHMOCK_TEST_POSTGRES_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
AUTHMOCK_TEST_POSTGRES_URL="$(scripts/postgres.sh start "$pgdir" "$pgport")"
export AUTHMOCK_TEST_POSTGRES_URL
# The outage tests freeze and stop it through scripts/postgres.sh.
export AUTHMOCK_TEST_POSTGRES_DIR="$pgdir"
# Serial: the conformance tests measure concurrency in the clients they run,
# and must not compete with each other for the two cores.
timed "swift test" swift test --skip-build --no-parallel
# The OpenAPI contract from outside: schemathesis against each profile, bounded.
timed "schemathesis" scripts/schemathesis.sh 30
# Coverage-guided fuzzing of the token check, body parsers and scenario loader, bounded.
timed "fuzzing" scripts/fuzz.sh 25
