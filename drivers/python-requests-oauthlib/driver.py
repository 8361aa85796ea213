#!/usr/bin/env python3
"""authmock driver for requests-oauthlib's OAuth2Session with auto_refresh_url.

Recipe, as requests-oauthlib's documentation gives it ("Refreshing tokens",
option three: define automatic token refresh and update): an
``OAuth2Session`` with ``auto_refresh_url``, ``auto_refresh_kwargs`` carrying
the client credentials, and a ``token_updater`` callback. The session
refreshes when oauthlib finds the token expired by ``expires_at`` (raising
TokenExpiredError internally); it never refreshes on a 401. A refused
refresh raises, which the application turns into "sign in again".
"""
import os
import sys

# oauthlib refuses http:// URLs unless told this is a local test setup, which it is.
os.environ.setdefault("OAUTHLIB_INSECURE_TRANSPORT", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import requests_oauthlib  # noqa: E402
from oauthlib.oauth2 import LegacyApplicationClient, OAuth2Error  # noqa: E402
from requests_oauthlib import OAuth2Session  # noqa: E402
from authmock_driver import serve, session_call  # noqa: E402


class RequestsOAuthlibDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"]
        self.client_id, self.client_secret = hello["clientId"], hello["clientSecret"]
        self.session = OAuth2Session(
            client=LegacyApplicationClient(client_id=self.client_id),
            auto_refresh_url=self.base + "/oauth/token",
            auto_refresh_kwargs={"client_id": self.client_id, "client_secret": self.client_secret},
            token_updater=self.token_updater,
        )

    def token_updater(self, token):
        self.saved = token

    def login(self, username, password):
        try:
            self.session.fetch_token(self.base + "/oauth/token", username=username, password=password,
                                     client_id=self.client_id, client_secret=self.client_secret)
            return {"outcome": "ok"}
        except OAuth2Error as error:
            return {"outcome": "http_error", "message": str(error)}

    def request(self, method, path, headers, body):
        return session_call(self.session, self.base, method, path, headers, body, refused=OAuth2Error)


if __name__ == "__main__":
    serve("requests-oauthlib", requests_oauthlib.__version__, ["oauth2"], RequestsOAuthlibDriver)
