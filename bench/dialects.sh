#!/usr/bin/env bash
# What a dialect file costs on the hot path: the server's CPU per request
# for the same requests on a dialect written in Swift (oauth2) and on
# dialects served from files (envelope, reissue, header-rotation), all on
# 127.0.0.1 and bounded in time. With BASELINE=/path/to/an/older/authmock
# (a release build of an earlier revision, where those dialects were Swift)
# each target runs against both binaries too, interleaved, and the ratio
# new/old is printed: the cost of serving a dialect from its file.
# Usage: [ROUNDS=3] [BASELINE=path] bench/dialects.sh [seconds-per-run, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-5}
source bench/common.sh
bench_install wrk:wrk curl:curl
new_binary=$(bench_release_authmock)
declare -A BINARY=([new]="$new_binary")
builds=(new)
if [ -n "${BASELINE:-}" ]; then
  [ -x "$BASELINE" ] || { echo "BASELINE=$BASELINE is not an executable" >&2; exit 2; }
  BINARY[old]=$BASELINE
  builds+=(old)
fi

bench_scratch

json() { python3 -c "import json,sys; d=json.load(sys.stdin); d=d.get('data') or d; print(d['$1'])"; }

# target name -> "profile|method|path|lua body and headers"
targets=(oauth2-refresh envelope-refresh reissue-refresh oauth2-echo envelope-echo header-rotation-echo)
declare -A PORT PID
for build in "${builds[@]}"; do
  for profile in oauth2 envelope reissue header-rotation; do
    port=$(free_port)
    # A huge reuse grace lets wrk replay one refresh token while every
    # request still takes the full rotation path (new refresh and access tokens).
    "${BINARY[$build]}" serve --port "$port" --profile "$profile" --log-level warning --reuse-grace 1000000000 >/dev/null & pids+=($!)
    PID[$build-$profile]=$!
    PORT[$build-$profile]=$port
    until curl -sf -o /dev/null "http://127.0.0.1:$port/health"; do sleep 0.01; done
    base="http://127.0.0.1:$port"
    if [ "$profile" = oauth2 ]; then
      login=$(curl -s -u demo:demo-secret -d grant_type=password -d username=alice -d password=wonderland "$base/oauth/token")
      access=$(echo "$login" | json access_token); refresh=$(echo "$login" | json refresh_token)
      printf 'wrk.method = "POST"\nwrk.body = "grant_type=refresh_token&refresh_token=%s"\nwrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\nwrk.headers["Authorization"] = "Basic ZGVtbzpkZW1vLXNlY3JldA=="\n' "$refresh" > "$work/$build-oauth2-refresh.lua"
      echo "/oauth/token" > "$work/$build-oauth2-refresh.path"
    else
      login=$(curl -s -H 'Content-Type: application/json' -d '{"username":"alice","password":"wonderland"}' "$base/auth/login")
      access=$(echo "$login" | json accessToken); refresh=$(echo "$login" | json refreshToken)
      case $profile in
        envelope) body="{\\\"refreshToken\\\":\\\"$refresh\\\"}"; path=/auth/refresh ;;
        reissue) body="{\\\"accessToken\\\":\\\"$access\\\",\\\"refreshToken\\\":\\\"$refresh\\\"}"; path=/auth/reissue ;;
        *) body="" ;;
      esac
      if [ -n "$body" ]; then
        printf 'wrk.method = "POST"\nwrk.body = "%s"\nwrk.headers["Content-Type"] = "application/json"\n' "$body" > "$work/$build-$profile-refresh.lua"
        echo "$path" > "$work/$build-$profile-refresh.path"
      fi
    fi
    # A resource answer encoded per request (/api/me is cached per token).
    printf 'wrk.method = "POST"\nwrk.body = "{\\"n\\":1}"\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer %s"\n' "$access" > "$work/$build-$profile-echo.lua"
    echo "/api/echo" > "$work/$build-$profile-echo.path"
  done
done

declare -A RESULTS
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round of $ROUNDS..." >&2
  for target in "${targets[@]}"; do
    profile=${target%-*}
    for build in "${builds[@]}"; do
      key="$build-$target"
      pid=${PID[$build-$profile]}
      before=$(cpu_ticks "$pid")
      wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" -s "$work/$key.lua" "http://127.0.0.1:${PORT[$build-$profile]}$(cat "$work/$key.path")" > "$work/$key.txt"
      after=$(cpu_ticks "$pid")
      if grep -q Non-2xx "$work/$key.txt"; then echo "$key: non-2xx answers, the run is invalid" >&2; cat "$work/$key.txt" >&2; exit 1; fi
      requests=$(awk '/requests in/ {print $1}' "$work/$key.txt")
      us=$(python3 -c "print(round(($after - $before) / $TICK / $requests * 1e6, 1))")
      RESULTS[$key]="${RESULTS[$key]:-} $us"
    done
  done
done

median() { python3 -c "import statistics,sys; print(round(statistics.median(float(x) for x in sys.argv[1:]), 1))" "$@"; }
echo
printf '%-22s %14s' target "CPU us/req"
[ -n "${BASELINE:-}" ] && printf ' %14s %10s' "baseline" "new/old"
echo
for target in "${targets[@]}"; do
  new=$(median ${RESULTS[new-$target]})
  printf '%-22s %14s' "$target" "$new"
  if [ -n "${BASELINE:-}" ]; then
    old=$(median ${RESULTS[old-$target]})
    printf ' %14s %10s' "$old" "$(python3 -c "print(round($new / $old, 2))")"
  fi
  echo
done
echo
echo "declared/Swift in this build: envelope refresh / oauth2 refresh $(python3 -c "print(round($(median ${RESULTS[new-envelope-refresh]}) / $(median ${RESULTS[new-oauth2-refresh]}), 2))"), envelope echo / oauth2 echo $(python3 -c "print(round($(median ${RESULTS[new-envelope-echo]}) / $(median ${RESULTS[new-oauth2-echo]}), 2))")"
