#!/usr/bin/env python3
"""authmock driver for authlib's httpx OAuth2Client (automatic token refresh).

Recipe, as authlib's documentation gives it: an ``OAuth2Client`` with
``token_endpoint`` set, so the client refreshes the token itself when it is
expired by ``expires_at``, and an ``update_token`` hook that stores the new
token. authlib refreshes only by its own clock: a 401 reaches the
application unchanged. A refresh that the server refuses raises, which the
application turns into "sign in again".
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import authlib  # noqa: E402
from authlib.integrations.base_client.errors import OAuthError  # noqa: E402
from authlib.integrations.httpx_client import OAuth2Client  # noqa: E402
from authmock_driver import outcome, serve  # noqa: E402


class AuthlibDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"]
        self.client = OAuth2Client(
            client_id=hello["clientId"],
            client_secret=hello["clientSecret"],
            token_endpoint=self.base + "/oauth/token",
            token_endpoint_auth_method="client_secret_basic",
            update_token=self.update_token,
            timeout=30,
        )

    def update_token(self, token, refresh_token=None, access_token=None):
        # The application's token store; the client keeps its own copy too.
        self.saved = token

    def login(self, username, password):
        try:
            self.client.fetch_token(self.base + "/oauth/token", grant_type="password", username=username, password=password)
            return {"outcome": "ok"}
        except OAuthError as error:
            return {"outcome": "http_error", "message": str(error)}

    def request(self, method, path, headers, body):
        try:
            response = self.client.request(method, (path if path.startswith("http") else self.base + path), headers=headers, content=body)
        except OAuthError as error:  # the refresh was refused: the app shows its login screen
            return {"outcome": "reauth_required", "message": str(error)}
        return outcome(response.status_code, response.text)


if __name__ == "__main__":
    serve("authlib-httpx", authlib.__version__, ["oauth2"], AuthlibDriver)
