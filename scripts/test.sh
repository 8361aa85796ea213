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

# Installs Debian packages, as root; otherwise says what is missing.
apt_install() {
  [ $# -gt 0 ] || return 0
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
  else
    echo "missing: $* (install them, or run as root to let this script do it)" >&2
    exit 1
  fi
}
# Installs PyPI distributions, into a Debian-managed Python too.
pip_install() {
  [ $# -gt 0 ] || return 0
  python3 -m pip install --quiet "$@" 2>/dev/null || python3 -m pip install --quiet --break-system-packages "$@"
}

# System packages the suite itself uses, installed only when missing: SQLite's
# headers (GRDB, --state sqlite:), PostgreSQL (the --state postgres:// tests)
# and PyYAML, which scripts/drivers.py needs to read the drivers' driver.yaml;
# pgrep (procps) counts the drivers a stopped run leaves (StoppedRunTests).
need_apt=()
for pair in "git:git" "python3:python3" "curl:curl" "pgrep:procps"; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need_apt+=("${pair#*:}")
done
[ -f /usr/include/sqlite3.h ] || need_apt+=(libsqlite3-dev)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need_apt+=(postgresql)
python3 -c "import yaml" 2>/dev/null || need_apt+=(python3-yaml)
apt_install "${need_apt[@]}"
python3 -c "import yaml" 2>/dev/null || pip_install pyyaml
command -v swift >/dev/null 2>&1 || { echo "swift is not on PATH: install Swift 6.2 or later" >&2; exit 1; }

# What the drivers in drivers/ need (their driver.yaml: Debian and PyPI
# packages), and what the tests need from PyPI: an independent JSON Schema
# validator for the scenario schema, websocket-client for the DevTools
# protocol the console tests click through, schemathesis for the OpenAPI contract,
# the real servers scripts/fidelity.py compares the dialects with (SimpleJWT,
# django-oauth-toolkit as oauth2 and as Passport's policy, moto's Cognito), and
# python-keycloak, auth0-python, firebasil, pycognito and msal, the SDKs the
# keycloak, auth0, firebase, cognito and entra dialects are checked with.
read -r -a driver_apt <<< "$(python3 scripts/drivers.py debian)"
apt_install "${driver_apt[@]}"
read -r -a need_pip <<< "$(python3 scripts/drivers.py pip pyyaml jsonschema joserfc websocket-client schemathesis django djangorestframework djangorestframework-simplejwt django-oauth-toolkit 'moto[server]' python-keycloak auth0-python firebasil pycognito msal)"
pip_install "${need_pip[@]}"

# Formatting (.swift-format): the toolchain's swift-format, strict, before anything is built.
if swift format --version >/dev/null 2>&1; then
  timed "format lint" swift format lint --strict --recursive Sources Tests Package.swift examples
else
  echo "swift format is not in this toolchain (Swift 6 ships it): formatting not checked" >&2
fi
# A build that prints a warning from the project's own files fails (issue
# 60): its sources, tests, drivers and example, wherever their path is; the
# dependencies' warnings are theirs. Run on a clean build (CI's): an
# incremental one reprints only what it compiles.
built_without_own_warnings() {
  local log
  log="$(mktemp)"
  "$@" 2>&1 | tee "$log"
  local status="${PIPESTATUS[0]}"
  [ "$status" -eq 0 ] || { rm -f "$log"; return "$status"; }
  local own
  # A compiler warning names its file first; SwiftPM's "found N file(s) which are
  # unhandled" names them on the lines after it.
  own="$(awk -v root="$PWD/" -v deps="$PWD/.build/" '
    index($0, ": warning: ") && index($0, root) == 1 && index($0, deps) != 1 { print; next }
    /^warning: .*unhandled/ { pending = $0; next }
    pending != "" && index($1, root) == 1 && index($1, deps) != 1 { print pending " " $1; next }
    { pending = "" }' "$log" | sort -u)"
  rm -f "$log"
  if [ -n "$own" ]; then
    echo "the build printed $(wc -l <<< "$own") warning(s) from the project's own files:" >&2
    echo "$own" >&2
    return 1
  fi
}
timed "swift build" built_without_own_warnings swift build --build-tests
# The drivers that are built (Go, Java, Rust: driver.yaml's build) are built
# from Debian's packages before the tests run them.
mapfile -t builds < <(python3 scripts/drivers.py builds)
for line in "${builds[@]}"; do
  # shellcheck disable=SC2086 # the build command's words
  timed "${line%%$'\t'*} driver" ${line#*$'\t'}
done
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
# examples/swift-testing, a package of its own that depends on this one
# (AuthmockTesting in its test target): one test per built-in case
# (--verbose lists them), its single flight's teeth, a 503 by hand, and its
# client through the proxy in front of django-oauth-toolkit, installed above
# (AUTHMOCK_REAL_BACKENDS=1 runs those; without it they are skipped). Built in
# this package's build directory, so the dependencies compiled above with
# the same flags are not compiled again (alone, cold, it takes about four
# minutes on two cores: its README).
timed "examples/swift-testing build" built_without_own_warnings swift build --build-tests --package-path examples/swift-testing --scratch-path .build
AUTHMOCK_REAL_BACKENDS=1 timed "examples/swift-testing" swift test --skip-build --package-path examples/swift-testing --scratch-path .build --verbose
# The OpenAPI contract from outside: schemathesis against each profile, bounded.
timed "schemathesis" scripts/schemathesis.sh 30
# Coverage-guided fuzzing of the token check, body parsers and scenario loader, bounded.
timed "fuzzing" scripts/fuzz.sh 25
