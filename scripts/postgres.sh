#!/usr/bin/env bash
# A throwaway PostgreSQL from Debian's `postgresql` package, on loopback only,
# for the tests and benchmarks of `--state postgres://`:
#   scripts/postgres.sh start DIR [PORT]   initialises DIR, starts the server,
#                                          prints the URL to pass to --state
#   scripts/postgres.sh stop DIR           stops it (DIR can then be removed)
# PostgreSQL refuses to run as root; as root the server runs as the
# `postgres` user the package creates.
set -euo pipefail
command="${1:?usage: scripts/postgres.sh start|stop DIR [PORT]}"
dir="${2:?usage: scripts/postgres.sh start|stop DIR [PORT]}"
port="${3:-55432}"
bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[ -x "$bindir/initdb" ] || { echo "PostgreSQL is not installed: apt-get install postgresql" >&2; exit 1; }
as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$command" in
  start)
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    as_server_user "$bindir/initdb" -D "$dir/data" -U authmock --auth=trust -E UTF8 >"$dir/initdb.log"
    # fsync off: a test database, thrown away after the run.
    as_server_user "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c fsync=off -c synchronous_commit=off" start >/dev/null
    as_server_user "$bindir/createdb" -h 127.0.0.1 -p "$port" -U authmock authmock
    echo "postgres://authmock@127.0.0.1:$port/authmock?sslmode=disable"
    ;;
  stop)
    as_server_user "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  *) echo "usage: scripts/postgres.sh start|stop DIR [PORT]" >&2; exit 2 ;;
esac
