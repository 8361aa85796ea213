#!/usr/bin/env bash
# Regenerates docs/compatibility.md and docs/compatibility.html: every driver
# in drivers/ that can run on this machine, plus the reference client, through
# the whole suite. Installs the Python libraries it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import authlib, httpx, requests_oauthlib, gql, google.auth, requests_oauth2client" 2>/dev/null \
  || python3 -m pip install --quiet authlib httpx requests-oauthlib gql google-auth requests-oauth2client
swift build --product authmock >/dev/null
swift build --product authmock-reference-driver >/dev/null
swift build --product authmock-urlsession-driver >/dev/null
bin="$(swift build --show-bin-path)"
go_driver="$(scripts/build-go-driver.sh)"
args=(--driver "reference=$bin/authmock-reference-driver"
      --driver "swift-urlsession=$bin/authmock-urlsession-driver"
      --expected-failures "swift-urlsession=drivers/swift-urlsession/expected-failures.yaml"
      --driver "go-oauth2=$go_driver"
      --expected-failures "go-oauth2=drivers/go-oauth2/expected-failures.yaml"
      --driver "java-okhttp=$(scripts/build-java-driver.sh java-okhttp)"
      --expected-failures "java-okhttp=drivers/java-okhttp/expected-failures.yaml"
      --driver "java-google-oauth-client=$(scripts/build-java-driver.sh java-google-oauth-client)"
      --expected-failures "java-google-oauth-client=drivers/java-google-oauth-client/expected-failures.yaml"
      --driver "node-axios=node drivers/node-axios/driver.js"
      --expected-failures "node-axios=drivers/node-axios/expected-failures.yaml"
      --driver "rust-oauth2=$(scripts/build-rust-driver.sh)"
      --expected-failures "rust-oauth2=drivers/rust-oauth2/expected-failures.yaml"
      --driver "ruby-oauth2=ruby drivers/ruby-oauth2/driver.rb"
      --expected-failures "ruby-oauth2=drivers/ruby-oauth2/expected-failures.yaml"
      --driver "perl-lwp-authen-oauth2=perl drivers/perl-lwp-authen-oauth2/driver.pl"
      --expected-failures "perl-lwp-authen-oauth2=drivers/perl-lwp-authen-oauth2/expected-failures.yaml")
for dir in drivers/python-*/; do
  name="$(basename "$dir")"
  [ -f "$dir/driver.py" ] || continue
  args+=(--driver "$name=python3 $dir/driver.py")
  [ -f "$dir/expected-failures.yaml" ] && args+=(--expected-failures "$name=$dir/expected-failures.yaml")
done
# JOBS: case runs at once (default: the cores); most of a case is waiting.
"$bin/authmock" matrix scenarios/ "${args[@]}" --jobs "${JOBS:-$(nproc)}" --markdown docs/compatibility.md --html docs/compatibility.html
