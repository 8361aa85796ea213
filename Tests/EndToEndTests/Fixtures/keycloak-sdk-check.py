#!/usr/bin/env python3
"""python-keycloak, unchanged, against `authmock serve --profile keycloak`.

Usage: keycloak-sdk-check.py HOST:PORT. Signs in with the password grant,
refreshes, and checks that a dead refresh token is refused in the words
python-keycloak's KeycloakOpenIDConnection keys on (openid_connection.py,
refresh_token: "Token is not active" / "Session not active" make it sign
in again), and that a request with a stale token is retried after a
refresh. Prints one line per check; exits 1 on the first that fails.
"""
import base64
import json
import sys
import urllib.request

from keycloak import KeycloakOpenID, KeycloakOpenIDConnection
from keycloak.exceptions import KeycloakAuthenticationError, KeycloakPostError

base = f"http://{sys.argv[1]}/"


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail and not ok else ""))
    if not ok:
        sys.exit(1)


def control(path, body):
    request = urllib.request.Request(base + "_authmock/" + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


openid = KeycloakOpenID(server_url=base, realm_name="authmock", client_id="authmock-app")
token = openid.token("alice", "wonderland")
check("the password grant answers an AccessTokenResponse",
      {"access_token", "expires_in", "refresh_expires_in", "refresh_token", "token_type"} <= token.keys(), token)

def decode_like_keycloak_js(value):
    """keycloak-js's decodeToken: three parts, the middle one base64url JSON (it throws on anything else)."""
    parts = value.split(".")
    if len(parts) != 3:
        raise ValueError("Unable to decode token, payload not found.")
    return json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))


try:
    claims = decode_like_keycloak_js(token["refresh_token"])
except ValueError as error:
    claims = {"error": str(error)}
check("the refresh token is a JWT keycloak-js decodes: typ Refresh, exp - iat = refresh_expires_in, the realm's iss",
      claims.get("typ") == "Refresh" and claims.get("exp", 0) - claims.get("iat", 0) == token["refresh_expires_in"]
      and claims.get("iss", "").endswith("/realms/authmock") and claims.get("sub") == "alice", claims)
try:
    openid.token("alice", "nope")
    check("a wrong password is refused", False)
except KeycloakAuthenticationError as error:
    check("a wrong password is 401 invalid_grant", error.response_code == 401 and b"Invalid user credentials" in error.response_body, error)

refreshed = openid.refresh_token(token["refresh_token"])
check("a refresh returns a new refresh token", refreshed["refresh_token"] != token["refresh_token"])
again = openid.refresh_token(token["refresh_token"])
check("the old refresh token stays valid (revokeRefreshToken: false)", "access_token" in again)

control("tokens/expire", {"kind": "refresh"})
try:
    openid.refresh_token(refreshed["refresh_token"])
    check("an expired refresh token is refused", False)
except KeycloakPostError as error:
    check("an expired refresh token is 400 'Token is not active'", error.response_code == 400 and b"Token is not active" in error.response_body, error)

# The connection class: on that answer it signs in again with its credentials.
connection = KeycloakOpenIDConnection(server_url=base, realm_name="authmock", client_id="authmock-app", username="alice", password="wonderland",
                                      grant_type="password")
connection.get_token()
first = connection.token["access_token"]
control("tokens/expire", {"kind": "all"})
response = connection.raw_get("api/me")
check("after a 401 the connection refreshes (here: signs in again) and retries", response.status_code == 200 and connection.token["access_token"] != first,
      response.text)
control("tokens/revoke", {"kind": "refresh"})
try:
    openid.refresh_token(connection.token["refresh_token"])
    check("a revoked session is refused", False)
except KeycloakPostError as error:
    check("a revoked session's refresh token is 400 'Session not active'", error.response_code == 400 and b"Session not active" in error.response_body, error)
print("python-keycloak recognises every answer")
