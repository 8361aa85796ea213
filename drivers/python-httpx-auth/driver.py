#!/usr/bin/env python3
"""authmock driver for httpx-auth's OAuth2ResourceOwnerPasswordCredentials.

Recipe, as the library's README gives it ("Resource Owner Password
Credentials flow"): ``OAuth2ResourceOwnerPasswordCredentials(token_url,
username, password, client_auth=(id, secret))`` as the ``auth`` of an
``httpx.Client``. The handler keeps the token in its token cache
(``OAuth2.token_cache``) and, before a request is sent, renews it with its
refresh token once it is expired by ``expires_in`` (30 seconds early by
default); it never looks at a 401. A refused refresh raises
``InvalidGrantRequest``, which the application turns into "sign in again".

Signing in: the handler asks for a token on the first request; the driver
asks the token cache for it at login, as that first request would, so the
tokens exist when the app says the user signed in.
"""
import importlib.metadata
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import httpx  # noqa: E402
from httpx_auth import OAuth2, OAuth2ResourceOwnerPasswordCredentials  # noqa: E402
from httpx_auth._errors import HttpxAuthException  # noqa: E402
from authmock_driver import outcome, serve  # noqa: E402


class HttpxAuthDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"]
        self.client_auth = (hello["clientId"], hello["clientSecret"])
        self.client = httpx.Client(timeout=30)

    def login(self, username, password):
        auth = OAuth2ResourceOwnerPasswordCredentials(self.base + "/oauth/token", username=username, password=password,
                                                      client_auth=self.client_auth)
        try:
            OAuth2.token_cache.get_token(auth.state, early_expiry=auth.early_expiry, on_missing_token=auth.request_new_token,
                                         on_expired_token=auth.refresh_token)
        except HttpxAuthException as error:
            return {"outcome": "http_error", "message": str(error)}
        self.client.auth = auth
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        try:
            response = self.client.request(method, path if path.startswith("http") else self.base + path, headers=headers, content=body)
        except HttpxAuthException as error:  # the refresh was refused: the app shows its login screen
            return {"outcome": "reauth_required", "message": str(error)}
        return outcome(response.status_code, response.text)


if __name__ == "__main__":
    serve("httpx-auth", importlib.metadata.version("httpx-auth"), ["oauth2"], HttpxAuthDriver)
