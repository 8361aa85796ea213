#!/usr/bin/env python3
"""authmock's cognito dialect beside moto's Cognito user pool emulation.

Usage: cognito-moto-compare.py HOST:PORT (a running `authmock serve
--profile cognito`). Starts moto's server (PyPI `moto[server]`) on a free
loopback port, makes a user pool, an app client with USER_PASSWORD_AUTH and
the user alice there, then sends both servers the same unsigned JSON 1.1
requests and compares what a client reads: the status, the error type (body
`__type` and the `x-amzn-ErrorType` header), the members of the answer, and
the claims of both tokens. Messages are compared where moto says what AWS
says (docs/profiles/cognito.md lists where moto does not, and the claims
moto has that authmock leaves out). Prints one line per check; exits 1 if
any differs.
"""
import base64
import json
import logging
import sys

import boto3
import requests
from moto.server import ThreadedMotoServer

authmock = f"http://{sys.argv[1]}"
logging.getLogger("werkzeug").setLevel(logging.ERROR)
moto_server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
moto_server.start()
moto = "http://%s:%d" % moto_server.get_host_and_port()
failed = []

aws = boto3.client("cognito-idp", region_name="us-east-1", endpoint_url=moto, aws_access_key_id="moto", aws_secret_access_key="moto")
pool = aws.create_user_pool(PoolName="authmock")["UserPool"]["Id"]
moto_client = aws.create_user_pool_client(UserPoolId=pool, ClientName="app", ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"])
moto_client = moto_client["UserPoolClient"]["ClientId"]
aws.admin_create_user(UserPoolId=pool, Username="alice", MessageAction="SUPPRESS")
aws.admin_set_user_password(UserPoolId=pool, Username="alice", Password="Wonderland1!", Permanent=True)
servers = {"moto": (moto, moto_client, "Wonderland1!"), "authmock": (authmock, "demo", "wonderland")}


def initiate(server, flow, parameters):
    base, client, _ = servers[server]
    response = requests.post(base + "/", json={"AuthFlow": flow, "ClientId": client, "AuthParameters": parameters}, timeout=10, headers={
        "X-Amz-Target": "AWSCognitoIdentityProviderService.InitiateAuth", "Content-Type": "application/x-amz-json-1.1"})
    body = response.json()
    error = response.headers.get("x-amzn-ErrorType", "").split(":")[0]
    return response.status_code, error, body


def claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def same(name, moto_value, authmock_value):
    ok = moto_value == authmock_value
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": moto {moto_value!r}, authmock {authmock_value!r}"))
    if not ok:
        failed.append(name)


def shape(answer):
    status, error, body = answer
    result = body.get("AuthenticationResult", {})
    # AWS answers `"ChallengeParameters": {}` beside the result too; moto leaves it out.
    return status, error, sorted(set(body) - {"ChallengeParameters"}), sorted(result), result.get("TokenType"), type(result.get("ExpiresIn")).__name__


def refusal(answer):
    status, error, body = answer
    return status, error, body.get("__type")


answers = {name: initiate(name, "USER_PASSWORD_AUTH", {"USERNAME": "alice", "PASSWORD": servers[name][2]}) for name in servers}
same("sign-in: status, members, token type, ExpiresIn's type", shape(answers["moto"]), shape(answers["authmock"]))
tokens = {name: answers[name][2]["AuthenticationResult"] for name in servers}
# Claims moto's tokens carry that authmock's leave out: origin_jti and auth_time (access).
for kind, left_out in (("AccessToken", {"origin_jti", "auth_time"}), ("IdToken", {"origin_jti"})):
    moto_claims, authmock_claims = claims(tokens["moto"][kind]), claims(tokens["authmock"][kind])
    same(f"{kind}: moto's claims are in authmock's", sorted(set(moto_claims) - left_out - set(authmock_claims)), [])
    same(f"{kind}: token_use", moto_claims["token_use"], authmock_claims["token_use"])
    same(f"{kind}: aud present", "aud" in moto_claims, "aud" in authmock_claims)
    same(f"{kind}: alg", json.loads(base64.urlsafe_b64decode(tokens["moto"][kind].split(".")[0] + "==")).get("alg"),
         json.loads(base64.urlsafe_b64decode(tokens["authmock"][kind].split(".")[0] + "==")).get("alg"))
refreshed = {name: initiate(name, "REFRESH_TOKEN_AUTH", {"REFRESH_TOKEN": tokens[name]["RefreshToken"]}) for name in servers}
same("refresh: status, members (no RefreshToken), token type", shape(refreshed["moto"]), shape(refreshed["authmock"]))

wrong = {name: initiate(name, "USER_PASSWORD_AUTH", {"USERNAME": "alice", "PASSWORD": "nope"}) for name in servers}
same("wrong password: status and error type", refusal(wrong["moto"]), refusal(wrong["authmock"]))
same("wrong password: message", wrong["moto"][2].get("message"), wrong["authmock"][2].get("message"))
unknown = {name: initiate(name, "REFRESH_TOKEN_AUTH", {"REFRESH_TOKEN": "not-one-of-ours"}) for name in servers}
same("unknown refresh token: status and error type", refusal(unknown["moto"]), refusal(unknown["authmock"]))

aws.admin_user_global_sign_out(UserPoolId=pool, Username="alice")
requests.post(authmock + "/_authmock/tokens/revoke", json={"kind": "refresh"}, timeout=10)
revoked = {name: initiate(name, "REFRESH_TOKEN_AUTH", {"REFRESH_TOKEN": tokens[name]["RefreshToken"]}) for name in servers}
same("signed out: status and error type", refusal(revoked["moto"]), refusal(revoked["authmock"]))
same("signed out: message", revoked["moto"][2].get("message"), revoked["authmock"][2].get("message"))

moto_server.stop()
if failed:
    sys.exit(1)
print("authmock answers as moto does")
