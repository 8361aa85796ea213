#!/usr/bin/env bash
# Regenerates every generated part of docs/ from the code: the error
# reference and the error table in each profile page, the scenario schema,
# the cases page, and the settings tables. Tests fail until this has been
# run after the code they come from changes.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/embed-suite.py
swift build --product authmock >/dev/null
bin="$(swift build --show-bin-path)/authmock"
"$bin" errors > docs/errors.md
"$bin" schema > docs/scenario.schema.json
"$bin" cases --markdown > docs/cases.md

# Replaces the <!-- NAME:begin --> ... <!-- NAME:end --> block of FILE with TEXT.
replace_block() {
  BLOCK="$1" TEXT="$3" python3 - "$2" <<'PY'
import os, re, sys
path, name = sys.argv[1], os.environ["BLOCK"]
text = open(path).read()
new = f"<!-- {name}:begin -->\n" + os.environ["TEXT"] + f"\n<!-- {name}:end -->"
text, count = re.subn(rf"<!-- {name}:begin -->.*?<!-- {name}:end -->", lambda _: new, text, flags=re.S)
if count != 1:
    sys.exit(f"{path}: expected one {name}:begin/end block, found {count}")
open(path, "w").write(text)
PY
}

for page in docs/profiles/*.md; do
  replace_block errors "$page" "$("$bin" errors --profile "$(basename "$page" .md)")"
done
replace_block errors docs/graphql.md "$("$bin" errors --profile graphql)"
replace_block schema docs/graphql.md "$(printf '```graphql\n%s\n```' "$("$bin" graphql-schema)")"
replace_block suite-counts README.md "The built-in suite: $("$bin" cases --counts)."
for page in README.md docs/configuration.md; do
  replace_block settings "$page" "$("$bin" settings)"
done
replace_block example docs/dialects.md "$(printf '```yaml\n%s\n```' "$("$bin" dialects --example)")"
replace_block reference docs/dialects.md "$("$bin" dialects --reference)"
echo "docs regenerated"
