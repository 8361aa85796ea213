#!/usr/bin/env bash
# Regenerates every generated part of docs/ from the code: the error
# reference and the error table in each profile page. Tests fail until
# this has been run after the table in code changes.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product authmock >/dev/null
bin="$(swift build --show-bin-path)/authmock"
"$bin" errors > docs/errors.md
"$bin" schema > docs/scenario.schema.json
"$bin" cases > docs/cases.md
for page in README.md docs/configuration.md; do
  TABLE="$("$bin" settings)" python3 - "$page" <<'PY'
import os, re, sys
path = sys.argv[1]
text = open(path).read()
new = "<!-- settings:begin -->\n" + os.environ["TABLE"] + "\n<!-- settings:end -->"
text, count = re.subn(r"<!-- settings:begin -->.*?<!-- settings:end -->", lambda _: new, text, flags=re.S)
if count != 1:
    sys.exit(f"{path}: expected one settings:begin/end block, found {count}")
open(path, "w").write(text)
PY
done
for page in docs/profiles/*.md; do
  profile="$(basename "$page" .md)"
  table="$("$bin" errors --profile "$profile")"
  TABLE="$table" python3 - "$page" <<'PY'
import os, re, sys
path = sys.argv[1]
text = open(path).read()
new = "<!-- errors:begin -->\n" + os.environ["TABLE"] + "\n<!-- errors:end -->"
text, count = re.subn(r"<!-- errors:begin -->.*?<!-- errors:end -->", lambda _: new, text, flags=re.S)
if count != 1:
    sys.exit(f"{path}: expected one errors:begin/end block, found {count}")
open(path, "w").write(text)
PY
done
echo "docs regenerated"
