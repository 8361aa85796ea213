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
        self.client = OAuth2Client(token_endpoint=self.base + "/oauth/token", client_id=hello["clientId"], client_secret=hello["clientSecret"],
                                   testing=True)  # allows http:// on loopback, as its docs say for tests
        self.session = requests.Session()

    def login(self, username, password):
        try:
            token = self.client.resource_owner_password(username=username, password=password)
        except OAuth2Error as error:
            return {"outcome": "http_error", "message": str(error)}
        self.session.auth = OAuth2AccessTokenAuth(self.client, token=token)
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        return session_call(self.session, self.base, method, path, headers, body, refused=OAuth2Error)


if __name__ == "__main__":
    serve("requests-oauth2client", importlib.metadata.version("requests-oauth2client"), ["oauth2"], RequestsOAuth2ClientDriver)
