#!/usr/bin/env python3
"""The differential suite: authmock's vendor dialects beside the real servers
that install here, request for request.

Usage: fidelity.py --authmock BINARY [--write FILE | --check FILE] [VENDOR...]

For each vendor, one conversation (sign-in good and bad, refresh good,
rotated, garbage, expired, missing, wrong content type, API calls with good,
expired, garbage, missing, lowercase-bearer and refresh-as-access tokens,
after a reuse, sign-out) is sent to the real server and to `authmock serve
--profile VENDOR`, each answering with tokens of its own. Their answers are
compared on what a client reads: the status, the error code, the body's member
names, the challenge header and the issued tokens' claims. A difference is
either listed below as accepted, with its reason, or the run fails; an
accepted difference that no longer differs fails too, so the list stays true.

The real servers, from PyPI (scripts/test.sh installs them), started here on
loopback, never mocked: djangorestframework-simplejwt (simplejwt),
django-oauth-toolkit (oauth2, with RFC 9700 reuse protection on; passport,
whose league/oauth2-server token policy it shares), moto's Cognito (cognito).

--write renders docs/fidelity.md from the runs; --check fails when the page
differs from what the runs render (tests/CI: FidelityTests). Exit status: 0
when every difference is accepted, 1 otherwise, 2 on a usage error.
"""
import argparse
import base64
import json
import logging
import os
import re
import subprocess
import sys

import requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "Tests", "EndToEndTests", "Fixtures")
FIELDS = ("status", "code", "members", "challenge", "claims")


# What a client reads in one answer.

def claims_of(token):
    """`alg`, the claim names and exp - iat of a JWT; "opaque" for anything else."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        return "opaque"
    try:
        header, payload = (json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in parts[:2])
    except ValueError:
        return "opaque"
    life = payload.get("exp", 0) - payload.get("iat", 0) if "exp" in payload and "iat" in payload else None
    return f"{header.get('alg')} {','.join(sorted(payload))}" + (f"; exp-iat {life}" if life is not None else "")


class Answer:
    def __init__(self, response, code_key, token_keys, resource=False):
        self.status = response.status_code
        try:
            self.body = response.json()
        except ValueError:
            self.body = None
        body = self.body if isinstance(self.body, dict) else {}
        header_code = response.headers.get("x-amzn-ErrorType", "").split(":")[0]
        self.code = str(body.get(code_key) or header_code or "-")
        self.members = ",".join(sorted(body)) if isinstance(self.body, dict) else ("not JSON" if self.body is None else type(self.body).__name__)
        masked = {k: ("<token>" if k in token_keys and isinstance(v, str) else v) for k, v in body.items()} if isinstance(self.body, dict) else self.body
        self.text = json.dumps(masked, sort_keys=True) if self.body is not None else response.text[:200]
        if resource and 200 <= self.status < 300:
            # What the API answers when it lets a call through is the app's own, not the vendor's.
            self.members = self.text = "the app's"
        self.header = response.headers.get("WWW-Authenticate", "-")
        # What a client keys on: the scheme and the `error` parameter (realm and description are free text, RFC 6750 section 3).
        error = re.search(r'error="([^"]*)"', self.header)
        self.challenge = self.header.split(" ")[0] + (f" error={error.group(1)}" if error else "") if self.header != "-" else "-"
        tokens = [(key, body.get(key)) for key in token_keys if isinstance(body.get(key), str)]
        result = body.get("AuthenticationResult")
        if isinstance(result, dict):
            tokens += [(key, result[key]) for key in ("AccessToken", "IdToken", "RefreshToken") if key in result]
        self.claims = "; ".join(f"{key}: {claims_of(value)}" for key, value in tokens) or "-"

    def field(self, name):
        return getattr(self, name)

    def summary(self):
        parts = [str(self.status)]
        if self.code != "-":
            parts.append(f"`{self.code}`")
        parts.append(self.members if self.members in ("not JSON", "the app's") else "{" + self.members + "}")
        if self.header != "-":
            parts.append(f"challenge `{self.header}`")
        return " ".join(parts)


# The servers.

def start(command, first_line):
    """A server process and what `first_line` reads from its stdout."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = first_line(process)
    if started is None:
        process.kill()
        sys.exit(f"fidelity: {' '.join(command)} did not start: {process.stderr.read()[-2000:]}")
    return process, started


def fixture(name, *arguments):
    """A real Django server from Tests/EndToEndTests/Fixtures: its first line is JSON with its port."""
    def read(process):
        try:
            return json.loads(process.stdout.readline())
        except ValueError:
            return None
    process, started = start([sys.executable, os.path.join(FIXTURES, name), *arguments], read)
    return process, f"http://127.0.0.1:{started['port']}", started


def authmock(binary, profile, *settings):
    """`authmock serve --profile PROFILE [SETTINGS]` on a free port: its banner names the port."""
    def read(process):
        for _ in range(40):
            line = process.stdout.readline()
            match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if match:
                return int(match.group(1))
            if not line:
                return None
        return None
    process, port = start([binary, "serve", "--port", "0", "--profile", profile, "--log-level", "error", *settings], read)
    return process, f"http://127.0.0.1:{port}"


def stop(process):
    try:
        process.stdin.close()
    except OSError:
        pass
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


class Side:
    """One server in a conversation: it records each answer under the probe's name."""

    def __init__(self, base, code_key, token_keys):
        self.base, self.code_key, self.token_keys = base, code_key, token_keys
        self.answers = {}
        self.order = []

    def ask(self, name, method, path, headers=None, body=None, json_body=None):
        response = requests.request(method, self.base + path, headers=headers or {}, data=body, json=json_body, timeout=30)
        answer = Answer(response, self.code_key, self.token_keys, resource=path.startswith("/api/me"))
        self.answers[name] = answer
        self.order.append(name)
        return answer.body if isinstance(answer.body, dict) else {}


def advance(base, seconds):
    requests.post(base + "/_authmock/clock/advance", json={"seconds": seconds}, timeout=10).raise_for_status()


# The vendors: each a conversation over one Side, how to start the real
# server, and the differences accepted, {probe: {field: reason}}.

JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def simplejwt_conversation(side, expired_access, expired_refresh):
    sign_in = {"username": "alice", "password": "wonderland"}
    login = side.ask("sign-in", "POST", "/api/token/", json_body=sign_in)
    access, refresh = login["access"], login["refresh"]
    side.ask("sign-in, wrong password", "POST", "/api/token/", json_body={"username": "alice", "password": "x"})
    side.ask("sign-in, no password", "POST", "/api/token/", json_body={"username": "alice"})
    side.ask("sign-in, not JSON", "POST", "/api/token/", headers=JSON, body="{bad")
    form = side.ask("sign-in, a form", "POST", "/api/token/", headers=FORM, body="username=alice&password=wonderland")
    side.ask("sign-in, text/plain", "POST", "/api/token/", headers={"Content-Type": "text/plain"}, body=json.dumps(sign_in))
    side.ask("refresh, a form", "POST", "/api/token/refresh/", headers=FORM, body=f"refresh={form.get('refresh', '')}")
    side.ask("API with its access token", "GET", "/api/me", headers={"Authorization": f"Bearer {access}"})
    side.ask("API without a token", "GET", "/api/me")
    side.ask("API with a lowercase bearer", "GET", "/api/me", headers={"Authorization": f"bearer {access}"})
    side.ask("API with garbage", "GET", "/api/me", headers={"Authorization": "Bearer garbage"})
    side.ask("API with the refresh token", "GET", "/api/me", headers={"Authorization": f"Bearer {refresh}"})
    side.ask("API with an expired access token", "GET", "/api/me", headers={"Authorization": f"Bearer {expired_access()}"})
    refreshed = side.ask("refresh", "POST", "/api/token/refresh/", json_body={"refresh": refresh})
    side.ask("API with the refreshed access token", "GET", "/api/me", headers={"Authorization": f"Bearer {refreshed['access']}"})
    side.ask("refresh, the rotated token again", "POST", "/api/token/refresh/", json_body={"refresh": refresh})
    side.ask("refresh, its successor after the reuse", "POST", "/api/token/refresh/", json_body={"refresh": refreshed["refresh"]})
    side.ask("refresh, an access token", "POST", "/api/token/refresh/", json_body={"refresh": access})
    side.ask("refresh, garbage", "POST", "/api/token/refresh/", json_body={"refresh": "junk"})
    side.ask("refresh, no token", "POST", "/api/token/refresh/", json_body={})
    side.ask("refresh, a list for a body", "POST", "/api/token/refresh/", headers=JSON, body="[1]")
    side.ask("refresh, GET", "GET", "/api/token/refresh/")
    side.ask("refresh, an expired token", "POST", "/api/token/refresh/", json_body={"refresh": expired_refresh()})
    second = side.ask("sign-in to sign out", "POST", "/api/token/", json_body=sign_in)
    leaving = second["refresh"]
    side.ask("sign out", "POST", "/api/token/blacklist/", json_body={"refresh": leaving})
    side.ask("API after the sign-out", "GET", "/api/me", headers={"Authorization": f"Bearer {second['access']}"})
    side.ask("refresh after the sign-out", "POST", "/api/token/refresh/", json_body={"refresh": leaving})
    side.ask("sign out again", "POST", "/api/token/blacklist/", json_body={"refresh": leaving})


def simplejwt(binary):
    real_process, real_base, started = fixture("simplejwt-server.py")
    mock_process, mock_base = authmock(binary, "simplejwt")
    try:
        real, mock = Side(real_base, "code", ("access", "refresh")), Side(mock_base, "code", ("access", "refresh"))
        simplejwt_conversation(real, lambda: started["expired_access"], lambda: started["expired_refresh"])

        def aged(seconds, key):
            token = requests.post(mock_base + "/api/token/", json={"username": "alice", "password": "wonderland"}, timeout=10).json()[key]
            advance(mock_base, seconds)
            return token
        simplejwt_conversation(mock, lambda: aged(301, "access"), lambda: aged(86_401, "refresh"))
        return real, mock
    finally:
        stop(real_process)
        stop(mock_process)


def oauth_conversation(side, client, expired_access, policy_only=False):
    """RFC 6749's token endpoint and an RFC 6750 API; `client` is the form's client_id and client_secret."""
    def token(name, form, headers=None):
        return side.ask(name, "POST", "/oauth/token", headers=headers or {**FORM, "Accept": "application/json"}, body=form)

    def api(name, token_value, scheme="Bearer"):
        headers = {"Accept": "application/json"}
        if token_value is not None:
            headers["Authorization"] = f"{scheme} {token_value}"
        side.ask(name, "GET", "/api/me", headers=headers)

    password = "grant_type=password&username=alice&password=wonderland&" + client
    first = token("sign-in", password)
    api("API with the first token", first["access_token"])
    second = token("refresh", f"grant_type=refresh_token&refresh_token={first['refresh_token']}&{client}")
    api("API with the replaced token", first["access_token"])
    api("API with the new token", second["access_token"])
    token("refresh, the rotated token again", f"grant_type=refresh_token&refresh_token={first['refresh_token']}&{client}")
    api("API after the reuse", second["access_token"])
    third = token("refresh, its successor after the reuse", f"grant_type=refresh_token&refresh_token={second['refresh_token']}&{client}")
    other = token("a second login", password)
    api("API of the second login", other["access_token"])
    if policy_only:
        newest = third.get("access_token")
        api("API with the token that replaced", second["access_token"])
        api("API with the newest token", newest)
        return
    token("sign-in, wrong password", "grant_type=password&username=alice&password=nope&" + client)
    token("sign-in, unknown client", "grant_type=password&username=alice&password=wonderland&client_id=nobody&client_secret=x")
    token("sign-in, wrong client secret", "grant_type=password&username=alice&password=wonderland&client_id=demo&client_secret=wrong")
    token("sign-in, no grant_type", "username=alice&password=wonderland&" + client)
    token("sign-in, an unknown grant_type", "grant_type=magic&" + client)
    token("sign-in, no password", "grant_type=password&username=alice&" + client)
    token("sign-in, JSON", json.dumps({"grant_type": "password", "username": "alice", "password": "wonderland"}), {**JSON, "Accept": "application/json"})
    token("sign-in, a form sent as text/plain", password, {"Content-Type": "text/plain", "Accept": "application/json"})
    side.ask("token endpoint, GET", "GET", "/oauth/token", headers={"Accept": "application/json"})
    api("API without a token", None)
    api("API with a lowercase bearer", other["access_token"], "bearer")
    api("API with garbage", "garbage")
    api("API with the refresh token", other["refresh_token"])
    api("API with an expired access token", expired_access())
    token("refresh, an access token", f"grant_type=refresh_token&refresh_token={other['access_token']}&{client}")
    token("refresh, garbage", f"grant_type=refresh_token&refresh_token=junk&{client}")
    token("refresh, no token", f"grant_type=refresh_token&{client}")
    leaving = token("sign-in to sign out", password)
    side.ask("sign out (RFC 7009)", "POST", "/oauth/revoke", headers=FORM,
             body=f"token={leaving['refresh_token']}&token_type_hint=refresh_token&{client}")
    token("refresh after the sign-out", f"grant_type=refresh_token&refresh_token={leaving['refresh_token']}&{client}")
    side.ask("sign out, an unknown token", "POST", "/oauth/revoke", headers=FORM, body=f"token=junk&{client}")


def oauth_pair(binary, profile, arguments, policy_only):
    real_process, real_base, started = fixture("oauth-toolkit-server.py", *arguments)
    mock_process, mock_base = authmock(binary, profile)
    client = f"client_id={started['client_id']}&client_secret={started['client_secret']}"
    mock_client = "client_id=demo&client_secret=demo-secret"
    keys = ("access_token", "refresh_token", "id_token")
    try:
        real, mock = Side(real_base, "error", keys), Side(mock_base, "error", keys)
        oauth_conversation(real, client, lambda: started["expired_access"], policy_only)

        def aged():
            token = requests.post(mock_base + "/oauth/token", data=f"grant_type=password&username=alice&password=wonderland&{mock_client}",
                                  headers=FORM, timeout=10).json()["access_token"]
            advance(mock_base, 3601)
            return token
        oauth_conversation(mock, mock_client, aged, policy_only)
        return real, mock
    finally:
        stop(real_process)
        stop(mock_process)


def oauth2(binary):
    return oauth_pair(binary, "oauth2", ["--reuse-protection"], policy_only=False)


def passport(binary):
    return oauth_pair(binary, "passport", [], policy_only=True)


def cognito_conversation(side, client, password):
    def initiate(name, flow, parameters, target="InitiateAuth", content_type="application/x-amz-json-1.1", body=None):
        payload = body if body is not None else json.dumps({"AuthFlow": flow, "ClientId": client, "AuthParameters": parameters})
        return side.ask(name, "POST", "/", headers={"X-Amz-Target": f"AWSCognitoIdentityProviderService.{target}", "Content-Type": content_type},
                        body=payload)

    login = initiate("sign-in", "USER_PASSWORD_AUTH", {"USERNAME": "alice", "PASSWORD": password})
    tokens = login.get("AuthenticationResult", {})
    initiate("sign-in, wrong password", "USER_PASSWORD_AUTH", {"USERNAME": "alice", "PASSWORD": "nope"})
    initiate("sign-in, unknown user", "USER_PASSWORD_AUTH", {"USERNAME": "nobody", "PASSWORD": "nope"})
    initiate("sign-in, no password", "USER_PASSWORD_AUTH", {"USERNAME": "alice"})
    initiate("sign-in, text/plain", "USER_PASSWORD_AUTH", {"USERNAME": "alice", "PASSWORD": password}, content_type="text/plain")
    initiate("sign-in, an unknown flow", "MAGIC_AUTH", {"USERNAME": "alice", "PASSWORD": password})
    side.ask("sign-in, unknown client", "POST", "/", headers={"X-Amz-Target": "AWSCognitoIdentityProviderService.InitiateAuth",
             "Content-Type": "application/x-amz-json-1.1"},
             body=json.dumps({"AuthFlow": "USER_PASSWORD_AUTH", "ClientId": "nobody", "AuthParameters": {"USERNAME": "alice", "PASSWORD": password}}))
    initiate("refresh", "REFRESH_TOKEN_AUTH", {"REFRESH_TOKEN": tokens.get("RefreshToken", "")})
    initiate("refresh, the same token again", "REFRESH_TOKEN_AUTH", {"REFRESH_TOKEN": tokens.get("RefreshToken", "")})
    initiate("refresh, garbage", "REFRESH_TOKEN_AUTH", {"REFRESH_TOKEN": "not-one-of-ours"})
    initiate("refresh, the access token", "REFRESH_TOKEN_AUTH", {"REFRESH_TOKEN": tokens.get("AccessToken", "")})
    initiate("refresh, no token", "REFRESH_TOKEN_AUTH", {})
    side.ask("refresh, unknown client", "POST", "/", headers={"X-Amz-Target": "AWSCognitoIdentityProviderService.InitiateAuth",
             "Content-Type": "application/x-amz-json-1.1"},
             body=json.dumps({"AuthFlow": "REFRESH_TOKEN_AUTH", "ClientId": "nobody", "AuthParameters": {"REFRESH_TOKEN": tokens.get("RefreshToken", "")}}))
    return tokens


def cognito(binary):
    from moto.server import ThreadedMotoServer
    import boto3

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    moto_server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto_server.start()
    moto_base = "http://%s:%d" % moto_server.get_host_and_port()
    # An app client made through the API is PreventUserExistenceErrors LEGACY, as moto answers.
    mock_process, mock_base = authmock(binary, "cognito", "--unknown-user", "reveal")
    try:
        aws = boto3.client("cognito-idp", region_name="us-east-1", endpoint_url=moto_base, aws_access_key_id="moto", aws_secret_access_key="moto")
        pool = aws.create_user_pool(PoolName="authmock")["UserPool"]["Id"]
        client = aws.create_user_pool_client(UserPoolId=pool, ClientName="app",
                                             ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"])["UserPoolClient"]["ClientId"]
        aws.admin_create_user(UserPoolId=pool, Username="alice", MessageAction="SUPPRESS")
        aws.admin_set_user_password(UserPoolId=pool, Username="alice", Password="Wonderland1!", Permanent=True)
        real, mock = Side(moto_base, "__type", ()), Side(mock_base, "__type", ())
        real_tokens = cognito_conversation(real, client, "Wonderland1!")
        mock_tokens = cognito_conversation(mock, "demo", "wonderland")
        # Signed out: AdminUserGlobalSignOut at moto, the control API's revoke at authmock.
        aws.admin_user_global_sign_out(UserPoolId=pool, Username="alice")
        requests.post(mock_base + "/_authmock/tokens/revoke", json={"kind": "refresh"}, timeout=10)
        for side, tokens, client_id in ((real, real_tokens, client), (mock, mock_tokens, "demo")):
            side.ask("refresh after a global sign-out", "POST", "/", headers={"X-Amz-Target": "AWSCognitoIdentityProviderService.InitiateAuth",
                     "Content-Type": "application/x-amz-json-1.1"},
                     body=json.dumps({"AuthFlow": "REFRESH_TOKEN_AUTH", "ClientId": client_id, "AuthParameters": {"REFRESH_TOKEN": tokens["RefreshToken"]}}))
        return real, mock
    finally:
        stop(mock_process)
        moto_server.stop()


class Accept:
    """A difference accepted, with its reason: in `field`, on the probes named
    (every probe when none), where the real server's value and authmock's
    are the ones given (any when None)."""

    def __init__(self, field, reason, probes=(), real=None, mock=None):
        self.field, self.reason, self.probes, self.real, self.mock = field, reason, tuple(probes), real, mock
        self.used = False

    def covers(self, probe, field, real, mock):
        return (field == self.field and (not self.probes or probe in self.probes)
                and (self.real is None or self.real == real) and (self.mock is None or self.mock == mock))


API_ERRORS = ("API after the reuse", "API without a token", "API with garbage", "API with the refresh token", "API with an expired access token",
              "API with the replaced token")

VENDORS = {
    "simplejwt": {
        # SimpleJWT's messages are compared too (`body`, token strings masked): clients match them.
        "run": simplejwt, "real": "djangorestframework-simplejwt", "fields": FIELDS + ("body",), "packages": ("djangorestframework-simplejwt", "Django"),
        "configuration": "SimpleJWT's documented setup: TokenObtainPairView, TokenRefreshView, TokenBlacklistView, "
                         "JWTAuthentication, ROTATE_REFRESH_TOKENS and BLACKLIST_AFTER_ROTATION on",
        "accepted": [
            Accept("claims", "SimpleJWT's claims (`token_type`, `jti`, `user_id`, `exp`, `iat`) are all there; authmock's tokens also carry "
                   "the standard claims it judges by (`iss`, `sub`, `aud`, `scope`, `sid`, `client_id`, `nbf`), and its refresh JWT is "
                   "signed HS512 with a key of its own where SimpleJWT signs HS256 with SECRET_KEY (no client verifies a refresh token)"),
            Accept("members", "DRF names the missing field as the member (`{\"password\": [\"This field is required.\"]}`); a dialect file "
                   "has no placeholder keys, so authmock says it in `detail` (docs/dialects/simplejwt.md)",
                   probes=("sign-in, no password", "refresh, no token")),
            Accept("body", "as the members above", probes=("sign-in, no password", "refresh, no token")),
            Accept("body", "DRF's 415 quotes the request's type (`Unsupported media type \"text/plain\" in request.`); a dialect "
                   "file's message is fixed text", probes=("sign-in, text/plain",)),
            Accept("body", "DRF's message quotes the parser's or the method's words (`JSON parse error - Expecting property name "
                   "...`, `Expected a dictionary, but got list.`, `Method \"GET\" not allowed.`); authmock's says the same without "
                   "them", probes=("sign-in, not JSON", "refresh, a list for a body", "refresh, GET")),
            Accept("status", "a sign-out ends the login at authmock: its access tokens are refused at once, where SimpleJWT blacklists "
                   "only the refresh token and takes the access token until it expires (cases 9.x judge a sign-out at the server)",
                   probes=("API after the sign-out",)),
            Accept("members", "as the status above", probes=("API after the sign-out",)),
            Accept("code", "as the status above", probes=("API after the sign-out",)),
            Accept("challenge", "as the status above", probes=("API after the sign-out",)),
            Accept("body", "as the status above", probes=("API after the sign-out",)),
        ],
    },
    "oauth2": {
        "run": oauth2, "real": "django-oauth-toolkit", "fields": FIELDS, "packages": ("django-oauth-toolkit", "oauthlib"),
        "configuration": "django-oauth-toolkit's TokenView at /oauth/token, its RFC 7009 RevokeTokenView at /oauth/revoke, an API behind "
                         "DRF's OAuth2Authentication, ROTATE_REFRESH_TOKEN and REFRESH_TOKEN_REUSE_PROTECTION on (RFC 9700 reuse detection)",
        "accepted": [
            Accept("claims", "RFC 6749 leaves the token format to the server: DOT's tokens are random strings, authmock's access tokens "
                   "JWTs (as most servers' now), its refresh tokens opaque; a client must not read either", real="access_token: opaque; refresh_token: opaque"),
            Accept("members", "`error_description` is optional (RFC 6749 section 5.2): oauthlib leaves it out, authmock says why",
                   real="error", mock="error,error_description"),
            Accept("members", "an API's error body is the app framework's (DRF's `detail` here); RFC 6750 puts the error in the "
                   "challenge, which agrees", probes=API_ERRORS, real="detail", mock="error,error_description"),
            Accept("code", "as the body: DRF's has no `error` member, the challenge's `error` agrees", probes=API_ERRORS, real="-"),
            Accept("status", "authmock's oauth2 leaves a replaced access token working until it expires (RFC 6749 leaves it open; Keycloak, "
                   "Auth0 and Okta do the same); DOT deletes it at the refresh, as `--refresh-revokes-access true` (the passport "
                   "dialect's policy) models", probes=("API with the replaced token",)),
            Accept("members", "as the status above", probes=("API with the replaced token",)),
            Accept("challenge", "as the status above", probes=("API with the replaced token",)),
            Accept("challenge", "RFC 6749 section 5.2 asks for a challenge on `invalid_client` only when the client authenticated with the "
                   "Authorization header (authmock then sends `Basic`); oauthlib sends one always", probes=("sign-in, unknown client", "sign-in, wrong client secret")),
            Accept("code", "a request without `grant_type` (or whose form cannot be read) lacks a required parameter: `invalid_request` "
                   "(RFC 6749 section 5.2); oauthlib reports `unsupported_grant_type`",
                   probes=("sign-in, no grant_type", "sign-in, JSON", "sign-in, a form sent as text/plain")),
            Accept("code", "Django's 405 has no body; authmock's says why in the RFC 6749 shape, with `Allow: POST`", probes=("token endpoint, GET",)),
            Accept("members", "as the code above", probes=("token endpoint, GET",)),
        ],
    },
    "passport": {
        "run": passport, "real": "django-oauth-toolkit (Passport's token policy)", "fields": ("works",), "packages": ("django-oauth-toolkit",),
        "configuration": "django-oauth-toolkit with its default rotation, the policy of league/oauth2-server under Laravel Passport: "
                         "a refresh revokes the refresh token given and the access token it replaces; a rotated token again is refused "
                         "and the login lives on. Only which requests work is compared: Passport's own answers (league's) are "
                         "checked against its source by DocExampleTests (docs/dialects/passport.md)",
        "accepted": [],
    },
    "cognito": {
        "run": cognito, "real": "moto's Cognito user pool (moto[server])", "fields": FIELDS, "packages": ("moto",),
        "configuration": "a user pool and an app client made through the API with USER_PASSWORD_AUTH and REFRESH_TOKEN_AUTH "
                         "(`PreventUserExistenceErrors` LEGACY, the API's default: authmock with `--unknown-user reveal`), "
                         "unsigned JSON 1.1 requests; where moto differs from AWS, authmock answers as AWS does",
        "accepted": [
            Accept("members", "AWS answers `\"ChallengeParameters\": {}` beside the result (the InitiateAuth reference's example); moto "
                   "leaves it out", real="AuthenticationResult", mock="AuthenticationResult,ChallengeParameters"),
            Accept("claims", "the claims clients verify agree (`token_use`, `iss`, `client_id`, `username`, the id token's `aud` and "
                   "`cognito:username`; RS256; `exp - iat`); not modelled: `origin_jti` and the access token's `auth_time` (moto's and "
                   "AWS's), AWS's `event_id`; authmock adds `sid` (its login) and the id token's `azp`, `email`, `email_verified` and "
                   "`name` (the user's attributes)"),
            Accept("code", "AWS checks the parameters first: `Missing required parameter ...` is InvalidParameterException "
                   "(amazon-cognito-identity-js issue 130 quotes AWS's answer); moto tries the sign-in, or looks the client up",
                   probes=("sign-in, no password", "refresh, no token")),
        ],
    },
}


def works(answer):
    return "works" if 200 <= answer.status < 300 else "refused"


def compare(vendor, real, mock):
    """Rows of (probe, real, authmock, verdict) and the unexplained differences."""
    spec = VENDORS[vendor]
    rows, unexplained = [], []
    for probe in real.order:
        if probe not in mock.answers:
            unexplained.append(f"{vendor}: {probe}: authmock's conversation did not get there")
            continue
        a, b = real.answers[probe], mock.answers[probe]
        reasons, open_fields = [], []
        for field in spec["fields"]:
            mine, theirs = show(a, field), show(b, field)
            if mine == theirs:
                continue
            rule = next((r for r in spec["accepted"] if r.covers(probe, field, mine, theirs)), None)
            if rule is None:
                open_fields.append(field)
                unexplained.append(f"{vendor}: {probe}: {field}: real {mine!r}, authmock {theirs!r}")
            else:
                rule.used = True
                reasons.append(f"{field} ({spec['accepted'].index(rule) + 1})")
        verdict = "same" if not reasons and not open_fields else (
            "**DIFFERS**: " + ", ".join(open_fields) if open_fields else "accepted: " + ", ".join(reasons))
        if spec["fields"] == ("works",):
            rows.append((probe, f"{works(a)} ({a.status})", f"{works(b)} ({b.status})", verdict))
        else:
            rows.append((probe, a.summary(), b.summary(), verdict))
        if "claims" in spec["fields"] and (a.claims != "-" or b.claims != "-"):
            rows.append((probe + ": tokens", a.claims, b.claims, "same" if a.claims == b.claims else "see above"))
    for rule in spec["accepted"]:
        if not rule.used:
            unexplained.append(f"{vendor}: the accepted difference in {rule.field} ({rule.reason[:60]}...) no longer differs: take it out")
    return rows, unexplained


def show(answer, field):
    return works(answer) if field == "works" else answer.text if field == "body" else answer.field(field)


def measured(spec):
    """The real server's versions: a line `--check` does not compare (a new release alone is no difference)."""
    from importlib.metadata import PackageNotFoundError, version

    def one(name):
        try:
            return f"{name} {version(name)}"
        except PackageNotFoundError:
            return f"{name} (not installed)"
    return "Measured with " + ", ".join(one(name) for name in spec["packages"]) + "."


def render(results):
    lines = [
        "# Fidelity: authmock beside the real servers",
        "",
        "Generated by `scripts/fidelity.py --write docs/fidelity.md` from runs against the",
        "real servers that install here (PyPI), started on loopback by the script;",
        "`FidelityTests` runs it in CI with `--check`, which fails on any difference",
        "not listed below with its reason, and on this page going stale. Each",
        "conversation is the same requests to both servers, each with tokens of its",
        "own; compared: the status, the error code, the body's member names, the",
        "`WWW-Authenticate` challenge and the issued tokens' claims (their names,",
        "`alg` and `exp - iat`). Vendors with no server that runs here (Keycloak,",
        "supabase/auth, Auth0, Firebase, Entra ID) are compared with their source",
        "and docs in their dialect pages (docs/dialects/) and by their SDKs",
        "(`IdentityProviderTests`). What two refreshes of one token at once get is",
        "compared by `SimpleJWTFidelityTests` (it varies from run to run at the real",
        "server, so it is no row here).",
        "",
    ]
    for vendor, (rows, _) in results.items():
        spec = VENDORS[vendor]
        same = sum(1 for row in rows if row[3] == "same")
        lines += [f"## {vendor} beside {spec['real']}", "", spec["configuration"] + ".", "", measured(spec), "",
                  f"{len(rows)} rows: {same} the same, {len(rows) - same} accepted differences.", "",
                  f"| request | {spec['real'].split(' (')[0]} | authmock | same |", "| --- | --- | --- | --- |"]
        for row in rows:
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
        lines.append("")
        if spec["accepted"]:
            lines += ["The differences accepted, and why:", ""]
            lines += [f"{n}. {rule.field}: {rule.reason}." for n, rule in enumerate(spec["accepted"], 1)]
            lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authmock", required=True, help="the authmock binary")
    parser.add_argument("--write", metavar="FILE", help="render the page to FILE")
    parser.add_argument("--check", metavar="FILE", help="fail when FILE is not what the runs render")
    parser.add_argument("vendors", nargs="*", help=f"of {', '.join(VENDORS)} (all when none)")
    options = parser.parse_args()
    unknown = [v for v in options.vendors if v not in VENDORS]
    if unknown:
        parser.error(f"no vendor {', '.join(unknown)} (of {', '.join(VENDORS)})")
    results, unexplained = {}, []
    for vendor in options.vendors or VENDORS:
        real, mock = VENDORS[vendor]["run"](options.authmock)
        rows, missed = compare(vendor, real, mock)
        results[vendor] = (rows, missed)
        unexplained += missed
        print(f"{vendor}: {len(rows)} rows, {len(missed)} unexplained", flush=True)
    page = render(results) + "\n"
    if options.write:
        with open(options.write, "w") as out:
            out.write(page)
    status = 0
    if options.check:
        def compared(text):
            return [line for line in text.splitlines() if not line.startswith("Measured with ")]
        with open(options.check) as committed:
            if compared(committed.read()) != compared(page):
                print(f"{options.check} is stale: run scripts/fidelity.py --authmock BINARY --write {options.check}")
                status = 1
    for line in unexplained:
        print("unexplained: " + line)
    if unexplained:
        status = 1
    else:
        print("every difference is accepted, with its reason")
    sys.exit(status)


if __name__ == "__main__":
    main()
