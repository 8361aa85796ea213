#!/usr/bin/env bash
# The build steps of the container image, in one place: the Dockerfile runs
# this script, and so does CI (which has no Docker engine), so CI proves the
# steps work. Builds a release `authmock` with the Swift standard library
# linked statically, checks it starts, and puts it in dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
swift build -c release --static-swift-stdlib --product authmock
bin="$(swift build -c release --static-swift-stdlib --show-bin-path)/authmock"
mkdir -p "$out"
cp "$bin" "$out/authmock"
# The binary must run without a Swift toolchain beside it.
"$out/authmock" --version
"$out/authmock" errors >/dev/null
# The suite travels inside the binary: the image runs it from any directory.
binary="$(cd "$out" && pwd)/authmock"
(cd / && "$binary" cases | tail -1)
echo "built $out/authmock"
