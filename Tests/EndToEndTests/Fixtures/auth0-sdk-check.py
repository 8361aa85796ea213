#!/usr/bin/env python3
"""auth0-python's authentication API, unchanged, against `authmock serve --profile auth0`.

Usage: auth0-sdk-check.py HOST:PORT. Signs in with the password-realm grant
(`GetToken.login`, as Auth0's docs show it), refreshes with rotation, and
checks that Auth0's refusals reach the SDK as Auth0Error with status 403
and `invalid_grant`: a wrong password, an unknown refresh token, and a
rotated one presented again, after which the whole family is refused.
Prints one line per check; exits 1 on the first that fails.
"""
import sys

from auth0.authentication import GetToken
from auth0.authentication.exceptions import Auth0Error


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail and not ok else ""))
    if not ok:
        sys.exit(1)


def refused(name, call):
    try:
        call()
        check(name, False, "not refused")
    except Auth0Error as error:
        check(name, error.status_code == 403 and error.error_code == "invalid_grant", f"{error.status_code} {error.error_code} {error.message}")


# protocol="http": the SDK's own switch for a test server ("Useful for testing").
token = GetToken(sys.argv[1], "authmock-app", protocol="http")
signed_in = token.login("alice", "wonderland", realm="Username-Password-Authentication", scope="openid offline_access")
check("the password-realm grant answers tokens", {"access_token", "refresh_token", "expires_in", "token_type"} <= signed_in.keys(), signed_in)
refused("a wrong password is 403 invalid_grant", lambda: token.login("alice", "nope", realm="Username-Password-Authentication"))
refused("an unknown refresh token is 403 invalid_grant", lambda: token.refresh_token("not-one-of-ours"))

first = signed_in["refresh_token"]
rotated = token.refresh_token(first)
check("a refresh rotates the refresh token", rotated["refresh_token"] != first, rotated)
refused("the rotated token again is 403 invalid_grant", lambda: token.refresh_token(first))
refused("after that reuse the whole family is refused", lambda: token.refresh_token(rotated["refresh_token"]))
print("auth0-python recognises every answer")
