"""A schemathesis check for `/graphql` (loaded with SCHEMATHESIS_HOOKS by
scripts/schemathesis.sh): every answer is below 500 and every GraphQL error
it carries is one docs/graphql.md documents, with that row's HTTP status.

schemathesis's own `not_a_server_error` counts any resolver error as a
server failure (ST113); authmock's NOT_FOUND and BAD_USER_INPUT beside
partial `data` are documented answers, so this check replaces it here.
"""
import json
import os
import re

import schemathesis

_DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "graphql.md")


def _documented():
    """(HTTP status, code) pairs of the generated error table."""
    text = open(_DOCS, encoding="utf-8").read()
    table = text.split("<!-- errors:begin -->", 1)[1].split("<!-- errors:end -->", 1)[0]
    return {(int(status), code) for status, code in re.findall(r"^\| (\d{3}) \| `([A-Z_]+)` \|", table, re.M)}


DOCUMENTED = _documented()
assert DOCUMENTED, "no error rows in docs/graphql.md"


@schemathesis.check
def graphql_errors_are_documented(ctx, response, case):
    status = response.status_code
    if status >= 500:
        raise AssertionError(f"{status} from /graphql: {response.text[:300]}")
    if status in (401, 403):
        return None  # the profile's own token answer (graphql_auth_errors: http), checked by the OpenAPI run
    try:
        body = json.loads(response.text)
    except ValueError:
        raise AssertionError(f"{status} with a body that is not JSON: {response.text[:300]}")
    if not isinstance(body, dict) or not ("data" in body or "errors" in body):
        raise AssertionError(f"{status} without data or errors: {response.text[:300]}")
    for error in body.get("errors") or []:
        code = (error.get("extensions") or {}).get("code")
        if (status, code) not in DOCUMENTED:
            raise AssertionError(f"undocumented GraphQL error: HTTP {status} with code {code!r}: {json.dumps(error)[:300]}")
    return None
