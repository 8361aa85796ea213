#!/usr/bin/env python3
"""pycognito over boto3, unchanged, against `authmock serve --profile cognito`.

Usage: cognito-sdk-check.py HOST:PORT. boto3's cognito-idp client, pointed at
authmock with `endpoint_url`, signs in with USER_PASSWORD_AUTH; pycognito's
`Cognito` verifies both tokens as it verifies Cognito's (RS256 against the
JWKS under the user pool's URL, `iss`, `token_use`, the id token's `aud`),
renews an expired access token by its own clock (`check_token`, as its
`RequestsSrpAuth` does before every request) keeping the refresh token the
answer leaves out, and meets each refusal as botocore's ClientError with
Cognito's code and message. Prints one line per check; exits 1 on the first
that fails.
"""
import json
import sys
import urllib.request

import boto3
import requests
from botocore.exceptions import ClientError
from pycognito import Cognito
from pycognito.utils import RequestsSrpAuth

base = f"http://{sys.argv[1]}"
POOL, CLIENT = "us-east-1_authmock", "demo"
AWS = {"endpoint_url": base, "aws_access_key_id": "authmock", "aws_secret_access_key": "authmock"}
client = boto3.client("cognito-idp", region_name="us-east-1", **AWS)


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail and not ok else ""))
    if not ok:
        sys.exit(1)


def control(path, body):
    request = urllib.request.Request(f"{base}/_authmock/{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def sign_in(password="wonderland"):
    return client.initiate_auth(AuthFlow="USER_PASSWORD_AUTH", ClientId=CLIENT, AuthParameters={"USERNAME": "alice", "PASSWORD": password})


def refused(call, code, message):
    try:
        call()
    except ClientError as error:
        got = (error.response["ResponseMetadata"]["HTTPStatusCode"], error.response["Error"]["Code"], error.response["Error"]["Message"])
        return got == (400, code, message), got
    return False, "accepted"


def user(result):
    tokens = result["AuthenticationResult"]
    return Cognito(POOL, CLIENT, id_token=tokens["IdToken"], access_token=tokens["AccessToken"], refresh_token=tokens["RefreshToken"],
                   boto3_client_kwargs=dict(AWS))


signed_in = sign_in()
check("InitiateAuth USER_PASSWORD_AUTH answers Cognito's AuthenticationResult",
      set(signed_in["AuthenticationResult"]) == {"AccessToken", "ExpiresIn", "IdToken", "RefreshToken", "TokenType"}
      and signed_in["ChallengeParameters"] == {}, signed_in)
alice = user(signed_in)
alice.verify_tokens()
check("pycognito verifies both tokens against the pool's JWKS and issuer",
      alice.access_claims["username"] == "alice" and alice.id_claims["cognito:username"] == "alice" and alice.id_claims["aud"] == CLIENT)

# Tokens issued while the server's clock is two hours behind are expired by
# the app's clock: pycognito renews before it sends anything.
control("clock/set", {"offsetSeconds": -7300})
stale = user(sign_in())
control("clock/set", {"offsetSeconds": 0})
refresh_token, access_token = stale.refresh_token, stale.access_token
response = requests.get(f"{base}/api/me", auth=RequestsSrpAuth(cognito=stale), timeout=10)
check("RequestsSrpAuth renews an expired access token (REFRESH_TOKEN_AUTH) before the call",
      response.status_code == 200 and stale.access_token != access_token, response.text)
check("the refresh token is kept: REFRESH_TOKEN_AUTH answers none", stale.refresh_token == refresh_token)
renewed = client.initiate_auth(AuthFlow="REFRESH_TOKEN_AUTH", ClientId=CLIENT, AuthParameters={"REFRESH_TOKEN": refresh_token})
check("a refresh's AuthenticationResult has no RefreshToken", "RefreshToken" not in renewed["AuthenticationResult"], renewed)

ok, got = refused(lambda: sign_in("nope"), "NotAuthorizedException", "Incorrect username or password.")
check("a wrong password is NotAuthorizedException 'Incorrect username or password.'", ok, got)
bogus = Cognito(POOL, CLIENT, refresh_token="not-one-of-ours", boto3_client_kwargs=dict(AWS))
ok, got = refused(bogus.renew_access_token, "NotAuthorizedException", "Invalid Refresh Token.")
check("an unknown refresh token is NotAuthorizedException 'Invalid Refresh Token.'", ok, got)
control("tokens/revoke", {"kind": "refresh"})
ok, got = refused(stale.renew_access_token, "NotAuthorizedException", "Refresh Token has been revoked")
check("a revoked refresh token is NotAuthorizedException 'Refresh Token has been revoked'", ok, got)
response = requests.get(f"{base}/api/me", headers={"Authorization": "Bearer not-a-jwt"}, timeout=10)
check("the API behind the user pool authorizer answers 401 Unauthorized", response.status_code == 401 and response.json() == {"message": "Unauthorized"},
      response.text)
print("pycognito recognises every answer")
