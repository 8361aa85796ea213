#!/usr/bin/env python3
"""authmock driver for google-auth's AuthorizedSession with user credentials.

Recipe, as google-auth's user guide gives it ("User credentials" and
"Making authenticated requests"): ``google.oauth2.credentials.Credentials``
built from an access token, a refresh token, ``token_uri`` and the client's
id and secret, used through ``google.auth.transport.requests.AuthorizedSession``.
The session refreshes the credentials and retries the request when an answer
is 401 (``DEFAULT_REFRESH_STATUS_CODES``, at most two refreshes per call). No
``expiry`` is given, as for credentials loaded from an ``authorized_user``
file, so the 401 is the only trigger. google-auth has no password grant: the
sign-in is the application's own POST, outside the library. A refused
refresh raises ``RefreshError``, which the application turns into "sign in
again".
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import google.auth  # noqa: E402
import requests  # noqa: E402
from google.auth.exceptions import RefreshError  # noqa: E402
from google.auth.transport.requests import AuthorizedSession  # noqa: E402
from google.oauth2.credentials import Credentials  # noqa: E402
from authmock_driver import serve, session_call  # noqa: E402


class GoogleAuthDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"]
        self.client_id, self.client_secret = hello["clientId"], hello["clientSecret"]
        self.session = None

    def login(self, username, password):
        answer = requests.post(self.base + "/oauth/token", auth=(self.client_id, self.client_secret), timeout=30,
                               data={"grant_type": "password", "username": username, "password": password})
        if answer.status_code != 200:
            return {"outcome": "http_error", "status": answer.status_code, "message": answer.text}
        token = answer.json()
        credentials = Credentials(token["access_token"], refresh_token=token.get("refresh_token"), token_uri=self.base + "/oauth/token",
                                  client_id=self.client_id, client_secret=self.client_secret)
        self.session = AuthorizedSession(credentials)
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        return session_call(self.session, self.base, method, path, headers, body, refused=RefreshError)


if __name__ == "__main__":
    serve("google-auth", google.auth.__version__, ["oauth2"], GoogleAuthDriver)
