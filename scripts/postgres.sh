#!/usr/bin/env bash
# A throwaway PostgreSQL from Debian's `postgresql` package, on loopback only,
# for the tests and benchmarks of `--state postgres://`:
#   scripts/postgres.sh start DIR [PORT]   initialises DIR, starts the server,
#                                          prints the URL to pass to --state
#   scripts/postgres.sh stop DIR           stops it (DIR can then be removed)
#   scripts/postgres.sh restart DIR        starts it again after a stop (same port)
#   scripts/postgres.sh freeze|thaw DIR    SIGSTOP / SIGCONT to all its processes:
#                                          a database that accepts connections
#                                          and never answers (the outage tests)
# PostgreSQL refuses to run as root; as root the server runs as the
# `postgres` user the package creates.
set -euo pipefail
usage="usage: scripts/postgres.sh start|stop|restart|freeze|thaw DIR [PORT]"
command="${1:?$usage}"
dir="${2:?$usage}"
port="${3:-55432}"
bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[ -x "$bindir/initdb" ] || { echo "PostgreSQL is not installed: apt-get install postgresql" >&2; exit 1; }
as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
start_server() {
  # fsync off: a test database, thrown away after the run.
  as_server_user "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c fsync=off -c synchronous_commit=off" start >/dev/null
}
# The postmaster and every backend: stopping only the postmaster leaves open connections answering.
server_processes() {
  local postmaster
  postmaster="$(head -1 "$dir/data/postmaster.pid")"
  echo "$postmaster" $(pgrep -P "$postmaster" || true)
}
case "$command" in
  start)
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    as_server_user "$bindir/initdb" -D "$dir/data" -U authmock --auth=trust -E UTF8 >"$dir/initdb.log"
    echo "$port" >"$dir/port"
    start_server
    as_server_user "$bindir/createdb" -h 127.0.0.1 -p "$port" -U authmock authmock
    echo "postgres://authmock@127.0.0.1:$port/authmock?sslmode=disable"
    ;;
  stop)
    as_server_user "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  restart)
    port="$(cat "$dir/port")"
    start_server
    ;;
  freeze) kill -STOP $(server_processes) ;;
  thaw) kill -CONT $(server_processes) ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
