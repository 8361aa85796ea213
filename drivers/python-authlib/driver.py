#!/usr/bin/env python3
"""authmock driver for authlib's httpx OAuth2Client (automatic token refresh)
and authlib's OpenID Connect client.

Recipe, as authlib's documentation gives it: an ``OAuth2Client`` with
``token_endpoint`` set, so the client refreshes the token itself when it is
expired by ``expires_at``, and an ``update_token`` hook that stores the new
token. authlib refreshes only by its own clock: a 401 reaches the
application unchanged. A refresh that the server refuses raises, which the
application turns into "sign in again".

OpenID Connect (the protocol's ``oidc`` extension): sign-in goes through
authlib's OIDC client (``OpenIDMixin``: discovery from the issuer, the code
flow with PKCE and a nonce, ``parse_id_token`` against the JWKS, fetched
again on an unknown kid). authlib validates the id token of the sign-in
only; the recipe validates a refreshed one in ``update_token`` with the
same ``parse_id_token`` and holds it to the sign-in's iss and sub (OIDC
Core 12.2), as its documentation leaves to the application.
"""
import os
import sys
from urllib.parse import parse_qs, urlparse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import authlib  # noqa: E402
import httpx  # noqa: E402
from authlib.integrations.base_client import BaseApp, FrameworkIntegration, OAuth2Mixin, OpenIDMixin  # noqa: E402
from authlib.integrations.base_client.errors import OAuthError  # noqa: E402
from authlib.integrations.httpx_client import OAuth2Client  # noqa: E402
from authlib.integrations.requests_client import OAuth2Session  # noqa: E402
from authmock_driver import outcome, serve  # noqa: E402


class OpenIDClient(OAuth2Mixin, OpenIDMixin, BaseApp):
    """authlib's OIDC client outside a web framework (the app keeps state and nonce)."""
    client_cls = OAuth2Session


class IDTokenRefused(Exception):
    pass


class AuthlibDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"]
        self.identity = None  # (iss, sub) of an OpenID Connect sign-in
        self.client = OAuth2Client(
            client_id=hello["clientId"],
            client_secret=hello["clientSecret"],
            token_endpoint=self.base + "/oauth/token",
            token_endpoint_auth_method="client_secret_basic",
            update_token=self.update_token,
            timeout=30,
        )
        self.oidc = OpenIDClient(
            FrameworkIntegration("authmock"), name="authmock",
            client_id=hello["clientId"], client_secret=hello["clientSecret"],
            server_metadata_url=self.base + "/.well-known/openid-configuration",
            client_kwargs={"scope": "openid read write", "code_challenge_method": "S256"},
        )

    def update_token(self, token, refresh_token=None, access_token=None):
        # The application's token store; the client keeps its own copy too.
        self.saved = token
        if self.identity and "id_token" in token:
            try:
                claims = self.oidc.parse_id_token(token, nonce=None)
            except Exception as error:
                raise IDTokenRefused(f"refreshed id token rejected: {error}") from error
            if (claims["iss"], claims["sub"]) != self.identity:
                raise IDTokenRefused(f"refreshed id token names {claims['iss']} {claims['sub']}, the sign-in was {self.identity}")

    def login(self, username, password, openid=False):
        if openid:
            return self.login_openid(username)
        try:
            self.client.fetch_token(self.base + "/oauth/token", grant_type="password", username=username, password=password)
            return {"outcome": "ok"}
        except OAuthError as error:
            return {"outcome": "http_error", "message": str(error)}

    def login_openid(self, username):
        redirect_uri = "http://127.0.0.1/callback"
        nonce = os.urandom(16).hex()
        request = self.oidc.create_authorization_url(redirect_uri=redirect_uri, nonce=nonce, login_hint=username)
        approval = httpx.get(request["url"], follow_redirects=False, timeout=30)
        query = parse_qs(urlparse(approval.headers.get("location", "")).query)
        if query.get("state") != [request["state"]] or "code" not in query:
            return {"outcome": "http_error", "status": approval.status_code, "message": "the authorization request was not approved"}
        try:
            token = self.oidc.fetch_access_token(redirect_uri=redirect_uri, code=query["code"][0], code_verifier=request["code_verifier"])
        except OAuthError as error:
            return {"outcome": "http_error", "message": str(error)}
        try:
            claims = self.oidc.parse_id_token(token, nonce=nonce)
        except Exception as error:  # the app refuses the sign-in: nobody is signed in
            return {"outcome": "reauth_required", "message": f"id token rejected: {type(error).__name__}: {error}"}
        self.identity = (claims["iss"], claims["sub"])
        self.client.token = token
        return {"outcome": "ok", "idTokenClaims": dict(claims)}

    def logout(self):
        # The app's sign-out: forget the token, then revoke the refresh token
        # with authlib's RFC 7009 call (OAuth2Client.revoke_token), so the
        # login ends at the server too.
        token = self.client.token
        self.client.token, self.identity = None, None
        if token and token.get("refresh_token"):
            try:
                self.client.revoke_token(self.base + "/oauth/revoke", token=token["refresh_token"], token_type_hint="refresh_token")
            except Exception as error:  # signed out here whatever the server answered
                print(f"revocation failed: {error}", file=sys.stderr)
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        if self.client.token is None:
            return {"outcome": "reauth_required", "message": "not signed in"}
        try:
            response = self.client.request(method, (path if path.startswith("http") else self.base + path), headers=headers, content=body)
        except IDTokenRefused as error:  # the app drops the session and shows its login screen
            self.client.token, self.identity = None, None
            return {"outcome": "reauth_required", "message": str(error)}
        except OAuthError as error:  # the refresh was refused: the app shows its login screen
            return {"outcome": "reauth_required", "message": str(error)}
        return outcome(response.status_code, response.text)


if __name__ == "__main__":
    serve("authlib-httpx", authlib.__version__, ["oauth2"], AuthlibDriver, capabilities=("url", "oidc", "logout"))
