#!/usr/bin/env bash
# The OpenAPI contract, checked from outside: schemathesis (PyPI) generates
# requests from docs/openapi.yaml against a live `authmock serve` of each
# profile and fails on any 5xx or any answer the document does not allow.
# Then its GraphQL mode against /graphql (the schema by introspection), with
# scripts/schemathesis_graphql.py's check: no 5xx, every GraphQL error one
# docs/graphql.md documents. Bounded: EXAMPLES per operation (default 40).
# scripts/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
examples="${1:-40}"
bin="${AUTHMOCK_BIN:-$(swift build --show-bin-path)/authmock}"
command -v schemathesis >/dev/null || { echo "schemathesis is not installed (pip install schemathesis)" >&2; exit 1; }
work="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT

for profile in oauth2 envelope reissue renewal header-rotation; do
  # envelope refuses GraphQL tokens in the body (graphql_auth_errors: body), oauth2 with its 401.
  extra=()
  [ "$profile" = envelope ] && extra=(--graphql-auth-errors body)
  "$bin" serve --profile "$profile" --port 0 "${extra[@]}" > "$work/$profile.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do grep -q "listening on" "$work/$profile.log" && break; sleep 0.1; done
  base="$(grep -o 'http://127.0.0.1:[0-9]*' "$work/$profile.log" | head -1)"
  [ -n "$base" ] || { cat "$work/$profile.log" >&2; exit 1; }
  # A signed-in client's token, so the protected operations get past 401.
  if [ "$profile" = oauth2 ]; then
    token="$(curl -s -u demo:demo-secret -d grant_type=password -d username=alice -d password=wonderland "$base/oauth/token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"
  else
    token="$(curl -s -H 'Content-Type: application/json' -d '{"username":"alice","password":"wonderland"}' "$base/auth/login" \
      | python3 -c 'import json,sys; b=json.load(sys.stdin); print((b.get("data") or b)["accessToken"])')"
  fi
  # /_authmock/events is a stream that does not end (server-sent events):
  # ConsoleTests reads it, in a browser.
  echo "== schemathesis: $profile at $base ($examples examples per operation)"
  schemathesis run docs/openapi.yaml --url "$base" \
    --include-tag "every dialect" --include-tag "$profile" --include-tag control --include-tag mock \
    --exclude-path /_authmock/events \
    --checks not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance \
    --max-examples "$examples" --request-timeout 10 -H "Authorization: Bearer $token" \
    > "$work/$profile.out" 2>&1 || { cat "$work/$profile.out"; exit 1; }
  grep -E "generated|passed|failure" "$work/$profile.out" | tail -2
  # GraphQL is the same in every dialect; two of them cover its two ways of refusing a token.
  if [ "$profile" = oauth2 ] || [ "$profile" = envelope ]; then
    echo "== schemathesis (GraphQL): $profile at $base/graphql"
    PYTHONPATH="$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=schemathesis_graphql \
      schemathesis run "$base/graphql" --checks graphql_errors_are_documented \
      --max-examples "$examples" --request-timeout 10 -H "Authorization: Bearer $token" \
      > "$work/$profile-graphql.out" 2>&1 || { cat "$work/$profile-graphql.out"; exit 1; }
    grep -E "generated|passed|failure" "$work/$profile-graphql.out" | tail -2
  fi
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
done
echo "schemathesis: every dialect conforms to docs/openapi.yaml, /graphql answers only documented errors, no server errors"
