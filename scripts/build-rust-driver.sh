#!/usr/bin/env bash
# Builds the Rust driver (drivers/rust-oauth2) offline with Debian's Rust
# toolchain against Debian's crate registry (/usr/share/cargo/registry), and
# prints the binary's path. Installs the toolchain and crates when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Debian packages are drivers/rust-oauth2/driver.yaml's.
read -r -a packages <<< "$(python3 scripts/drivers.py debian rust-oauth2)"
if [ ${#packages[@]} -gt 0 ]; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
# Cargo's home for this build only: crates.io replaced by Debian's registry.
home="$PWD/.build/rust-cargo-home"
mkdir -p "$home"
cat > "$home/config.toml" <<'TOML'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
TOML
CARGO_HOME="$home" RUSTC=/usr/bin/rustc /usr/bin/cargo build --quiet --release \
  --manifest-path drivers/rust-oauth2/Cargo.toml --target-dir "$PWD/.build/rust-oauth2"
echo "$PWD/.build/rust-oauth2/release/authmock-rust-oauth2-driver"
