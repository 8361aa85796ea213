#!/usr/bin/env python3
"""MSAL for Python, unchanged, against `authmock serve --profile entra --tls`.

Usage: entra-sdk-check.py HOST:PORT CERTIFICATE. A PublicClientApplication
whose authority is the tenant on authmock (HTTPS, the certificate trusted as
an app's test setup would; `instance_discovery=False`, as for any authority
that is not Microsoft's) reads the tenant's discovery document, takes a
refresh token from a password grant (`acquire_token_by_refresh_token`, its
documented way in for a token obtained elsewhere: its own
`acquire_token_by_username_password` first probes user realm discovery at
`https://HOST/common/userrealm/...` on port 443 whatever the authority's
port, msal/authority.py `user_realm_discovery`), builds its account from the
id token, answers acquire_token_silent from its cache, renews with the
refresh token when forced, and meets a revoked session as the error dict
MSAL returns, with Entra's AADSTS code and suberror. Prints one line per
check; exits 1 on the first that fails.
"""
import json
import sys

import msal
import requests

host, certificate = sys.argv[1], sys.argv[2]
base = f"https://{host}"
TENANT, CLIENT, SCOPES = "f8cdef31-a31e-4b4a-93e4-5f571e91255a", "demo", ["User.Read"]
session = requests.Session()
session.verify = certificate
# requests lets REQUESTS_CA_BUNDLE (set on many machines) win over `verify`.
session.trust_env = False


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail and not ok else ""))
    if not ok:
        sys.exit(1)


def control(path, body):
    return session.post(f"{base}/_authmock/{path}", data=json.dumps(body), headers={"Content-Type": "application/json"}, timeout=10).json()


token_endpoint = f"{base}/{TENANT}/oauth2/v2.0/token"
password = {"grant_type": "password", "client_id": CLIENT, "username": "alice", "scope": "User.Read offline_access openid profile"}
wrong = session.post(token_endpoint, data={**password, "password": "nope"}, timeout=10)
check("a wrong password is 400 invalid_grant AADSTS50126", wrong.status_code == 400 and wrong.json()["error_codes"] == [50126], wrong.text)
grant = session.post(token_endpoint, data={**password, "password": "wonderland"}, timeout=10).json()
check("the password grant answers Entra's members", {"token_type", "scope", "expires_in", "ext_expires_in", "access_token", "refresh_token",
                                                      "id_token"} <= set(grant), grant)

app = msal.PublicClientApplication(CLIENT, authority=f"{base}/{TENANT}", instance_discovery=False, http_client=session)
signed_in = app.acquire_token_by_refresh_token(grant["refresh_token"], scopes=SCOPES)
check("MSAL redeems the refresh token and reads the id token", "access_token" in signed_in
      and signed_in.get("id_token_claims", {}).get("preferred_username") == "alice", signed_in)
accounts = app.get_accounts()
check("MSAL builds the account from the id token", len(accounts) == 1 and accounts[0]["username"] == "alice", accounts)
cached = app.acquire_token_silent(SCOPES, account=accounts[0])
check("acquire_token_silent answers from the cache", cached and cached.get("access_token") == signed_in["access_token"]
      and cached.get("token_source") == "cache", cached)
renewed = app.acquire_token_silent(SCOPES, account=accounts[0], force_refresh=True)
check("a forced renewal uses the refresh token", renewed and renewed.get("access_token") not in (None, signed_in["access_token"])
      and renewed.get("token_source") == "identity_provider", renewed)
response = session.get(f"{base}/api/me", headers={"Authorization": "Bearer " + renewed["access_token"]}, timeout=10)
check("the renewed access token works", response.status_code == 200, response.text)
response = session.get(f"{base}/api/me", headers={"Authorization": "Bearer not-a-jwt"}, timeout=10)
check("Graph's 401 InvalidAuthenticationToken for a bad token", response.status_code == 401
      and response.json()["error"]["code"] == "InvalidAuthenticationToken" and "authorization_uri" in response.headers.get("WWW-Authenticate", ""),
      response.text)
control("tokens/revoke", {"kind": "refresh"})
refused = app.acquire_token_silent_with_error(SCOPES, account=accounts[0], force_refresh=True)
check("a revoked refresh token is invalid_grant AADSTS50173", refused is not None and refused.get("error") == "invalid_grant"
      and refused.get("error_codes") == [50173] and refused.get("suberror") == "bad_token", refused)
print("msal recognises every answer")
