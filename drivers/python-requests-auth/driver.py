#!/usr/bin/env python3
"""authmock driver for requests-auth's OAuth2ResourceOwnerPasswordCredentials.

Recipe, as the library's README gives it ("Resource Owner Password
Credentials flow"): ``OAuth2ResourceOwnerPasswordCredentials(token_url,
username, password, session_auth=(id, secret))`` as the ``auth`` of a
``requests.Session``. The handler keeps the token in the library's token
cache (``OAuth2.token_cache``) and, before a request is sent, renews it
with its refresh token once it is expired by ``expires_in`` (30 seconds
early by default); it never looks at a 401. A refused grant raises a
``RequestsAuthException``, which the application turns into "sign in again".

Signing in: the handler asks for a token on the first request; the driver
asks the token cache for it at login, as that first request would, so the
tokens exist when the app says the user signed in.
"""
import importlib.metadata
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import requests  # noqa: E402
from requests_auth import OAuth2, OAuth2ResourceOwnerPasswordCredentials  # noqa: E402
from requests_auth._errors import RequestsAuthException  # noqa: E402
from authmock_driver import serve, session_call  # noqa: E402


class RequestsAuthDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"]
        self.client_auth = (hello["clientId"], hello["clientSecret"])
        self.session = requests.Session()

    def login(self, username, password):
        auth = OAuth2ResourceOwnerPasswordCredentials(self.base + "/oauth/token", username=username, password=password,
                                                      session_auth=self.client_auth)
        try:
            OAuth2.token_cache.get_token(key=auth.state, early_expiry=auth.early_expiry, on_missing_token=auth.request_new_token,
                                         on_expired_token=auth.refresh_token)
        except RequestsAuthException as error:
            return {"outcome": "http_error", "message": str(error)}
        self.session.auth = auth
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        return session_call(self.session, self.base, method, path, headers, body, refused=RequestsAuthException)


if __name__ == "__main__":
    serve("requests-auth", importlib.metadata.version("requests-auth"), ["oauth2"], RequestsAuthDriver)
