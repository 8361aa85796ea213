#!/usr/bin/env python3
"""authmock driver for requests-oauth2client's auto-renewing OAuth2AccessTokenAuth.

Recipe, as the library's README gives it ("Using OAuth2Client as a requests
Auth Handler"): an ``OAuth2Client`` for the token endpoint with the client's
id and secret, a token from ``resource_owner_password``, and
``OAuth2AccessTokenAuth(client, token=token)`` as the ``auth`` of a
``requests.Session``. The handler renews the token with its refresh token
when it is expired by ``expires_in`` (with a 20-second leeway), before a
request is sent; it never looks at a 401. A refused refresh raises an
``OAuth2Error``, which the application turns into "sign in again".
"""
import importlib.metadata
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import requests  # noqa: E402
from requests_oauth2client import OAuth2AccessTokenAuth, OAuth2Client  # noqa: E402
from requests_oauth2client.exceptions import OAuth2Error  # noqa: E402
from authmock_driver import serve, session_call  # noqa: E402


class RequestsOAuth2ClientDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"]
        self.client = OAuth2Client(token_endpoint=self.base + "/oauth/token", revocation_endpoint=self.base + "/oauth/revoke",
                                   client_id=hello["clientId"], client_secret=hello["clientSecret"],
                                   testing=True)  # allows http:// on loopback, as its docs say for tests
        self.session = requests.Session()

    def login(self, username, password):
        try:
            token = self.client.resource_owner_password(username=username, password=password)
        except OAuth2Error as error:
            return {"outcome": "http_error", "message": str(error)}
        self.session.auth = OAuth2AccessTokenAuth(self.client, token=token)
        return {"outcome": "ok"}

    def logout(self):
        # The app's sign-out: the session loses its auth handler, and the
        # refresh token is revoked with the library's RFC 7009 call.
        auth, self.session.auth = self.session.auth, None
        token = getattr(auth, "token", None)
        if token is not None and token.refresh_token:
            try:
                self.client.revoke_refresh_token(token.refresh_token)
            except Exception as error:  # signed out here whatever the server answered
                print(f"revocation failed: {error}", file=sys.stderr)
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        if self.session.auth is None:
            return {"outcome": "reauth_required", "message": "not signed in"}
        return session_call(self.session, self.base, method, path, headers, body, refused=OAuth2Error)


if __name__ == "__main__":
    serve("requests-oauth2client", importlib.metadata.version("requests-oauth2client"), ["oauth2"], RequestsOAuth2ClientDriver,
          capabilities=("url", "logout"))
