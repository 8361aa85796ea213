#!/usr/bin/env bash
# The build steps of the container image, in one place: the Dockerfile runs
# this script, and so does CI (which has no Docker engine), so CI proves the
# steps work. Builds a release `authmock` as docker/release-flags says (the
# Swift runtime and Foundation linked statically, so the image needs no
# toolchain; a position-dependent executable, so the loader applies no
# relocations to it: about 160,000 of them, which cost ~6 MB of resident
# memory and start time in a test server that gains nothing from ASLR),
# checks it starts, and puts it in dist/. bench/run.sh measures this build.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
mapfile -t flags < docker/release-flags
# SCRATCH_PATH: a build directory of its own (CI builds this beside `swift
# test`, and SwiftPM locks a build directory while a command uses it).
[ -z "${SCRATCH_PATH:-}" ] || flags+=(--scratch-path "$SCRATCH_PATH")
swift build "${flags[@]}" --product authmock
bin="$(swift build "${flags[@]}" --show-bin-path)/authmock"
mkdir -p "$out"
cp "$bin" "$out/authmock"
# The binary must run without a Swift toolchain beside it.
"$out/authmock" --version
"$out/authmock" errors >/dev/null
# The suite travels inside the binary: the image runs it from any directory.
binary="$(cd "$out" && pwd)/authmock"
(cd / && "$binary" cases | tail -1)
echo "built $out/authmock"
