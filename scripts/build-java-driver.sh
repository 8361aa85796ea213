#!/usr/bin/env bash
# Builds a Java driver (drivers/NAME, default java-okhttp) offline from
# Debian's Java packages, with the shared protocol loop in drivers/java-common,
# into .build/NAME, writes .build/NAME/run (the command that runs it) and
# prints that path. The packages and jars are the driver's driver.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:-java-okhttp}"
[ -f "drivers/$name/driver.yaml" ] || { echo "unknown Java driver: $name" >&2; exit 2; }
read -r -a packages <<< "$(python3 scripts/drivers.py debian "$name")"
read -r -a jars <<< "$(python3 scripts/drivers.py jars "$name")"
classpath=""
for jar in "${jars[@]}"; do classpath+="/usr/share/java/$jar.jar:"; done
missing=0
for jar in "${jars[@]}"; do [ -f "/usr/share/java/$jar.jar" ] || missing=1; done
if [ ${#packages[@]} -gt 0 ] || [ "$missing" -eq 1 ]; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi
out=".build/$name"
mkdir -p "$out"
javac -nowarn -d "$out" -cp "$classpath" drivers/java-common/StdioDriver.java "drivers/$name/Driver.java"
printf '#!/bin/sh\nexec java -cp "%s" Driver\n' "$PWD/$out:$classpath" > "$out/run"
chmod +x "$out/run"
echo "$PWD/$out/run"
