#!/usr/bin/env python3
"""firebasil's Firebase Auth client, unchanged, against `authmock serve --profile firebase`.

Usage: firebase-sdk-check.py HOST:PORT. Points the SDK at authmock as at the
Firebase Auth emulator (FIREBASE_AUTH_EMULATOR_HOST, set before the SDK is
imported, as its docs say), signs in with a password, renews the ID token
through the Secure Token API, and checks that each refusal reaches the SDK
as the exception class it maps Firebase's message to. firebasil builds its
answers into dataclasses with exactly the fields Firebase sends, so a field
too many or too few is a TypeError here. The JS SDK's refresh (a form body)
is checked beside it over plain HTTP. Prints one line per check; exits 1 on
the first that fails.
"""
import asyncio
import json
import os
import sys
import urllib.request
from datetime import timedelta

host = sys.argv[1]
os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = host

from firebasil.auth import AuthClient  # noqa: E402
from firebasil.exceptions import AuthRequestException, InvalidRefreshToken, TokenExpired  # noqa: E402


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail and not ok else ""))
    if not ok:
        sys.exit(1)


def http(method, path, body=None, content_type="application/json"):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(f"http://{host}{path}", data=data, method=method, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


async def refused(name, call, exception):
    try:
        await call
        check(name, False, "not refused")
    except AuthRequestException as error:
        check(name, type(error) is exception, f"{type(error).__name__}: {error}")


async def main():
    async with AuthClient(api_key="authmock-key") as auth:
        user = await auth.sign_in_with_password(email="alice@example.com", password="wonderland")
        check("signInWithPassword answers the fields Firebase does", user.local_id == "alice@example.com" and user.registered, user)
        check("expiresIn is a string of seconds", user.expires_in == timedelta(seconds=3600), user.expires_in)
        renewed = await auth.refresh(user.refresh_token)
        check("the Secure Token API renews the ID token (JSON body)", renewed.id_token != user.id_token and renewed.token_type == "Bearer", renewed)
        check("the refresh token does not rotate", renewed.refresh_token == user.refresh_token, renewed.refresh_token)
        status, form = http("POST", "/securetoken.googleapis.com/v1/token?key=authmock-key",
                            f"grant_type=refresh_token&refresh_token={user.refresh_token}".encode(), "application/x-www-form-urlencoded")
        check("a form body, as the JS SDK sends it, renews too", status == 200 and form["user_id"] == "alice@example.com" and form["expires_in"] == "3600", form)
        await refused("a wrong password is refused", auth.sign_in_with_password(email="alice@example.com", password="nope"), AuthRequestException)
        await refused("an unknown refresh token is INVALID_REFRESH_TOKEN", auth.refresh("not-one-of-ours"), InvalidRefreshToken)
        status, _ = http("POST", "/_authmock/tokens/revoke", {"kind": "refresh", "subject": "alice@example.com"})
        check("the control API revokes the session", status == 200)
        await refused("a revoked refresh token is TOKEN_EXPIRED: sign in again", auth.refresh(user.refresh_token), TokenExpired)
    status, answer = http("GET", "/api/me", None)
    check("no ID token on a Firestore-style resource is 403 PERMISSION_DENIED",
          status == 403 and answer["error"]["status"] == "PERMISSION_DENIED", answer)
    print("firebasil recognises every answer")


asyncio.run(main())
