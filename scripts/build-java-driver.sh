#!/usr/bin/env bash
# Builds the OkHttp driver offline from Debian's Java packages and prints
# the command that runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
jars=/usr/share/java/okhttp.jar:/usr/share/java/okio.jar:/usr/share/java/gson.jar
if ! command -v javac >/dev/null || [ ! -f /usr/share/java/okhttp.jar ] || [ ! -f /usr/share/java/gson.jar ]; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless libokhttp-java libgoogle-gson-java >/dev/null
fi
mkdir -p .build/java-okhttp
javac -nowarn -d .build/java-okhttp -cp "$jars" drivers/java-okhttp/Driver.java 2>/dev/null
echo "java -cp $PWD/.build/java-okhttp:$jars Driver"
