#!/usr/bin/env python3
"""authmock driver for requests-oauthlib's OAuth2Session with auto_refresh_url.

Recipe, as requests-oauthlib's documentation gives it ("Refreshing tokens",
option three: define automatic token refresh and update): an
``OAuth2Session`` with ``auto_refresh_url``, ``auto_refresh_kwargs`` carrying
the client credentials, and a ``token_updater`` callback. The session
refreshes when oauthlib finds the token expired by ``expires_at`` (raising
TokenExpiredError internally); it never refreshes on a 401. A refused
refresh raises, which the application turns into "sign in again".

Instances (case 9.6, the app and its extension over one token store): the
app keeps its tokens where ``token_updater`` saves them, and another
instance builds its own ``OAuth2Session`` from what is saved there, at its
first call, the documented way (``token=``). Each session then holds the
token in its client (``OAuth2Session.token``) and reads the store no more.
"""
import os
import sys
import threading

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
        self.session = self.new_session()
        self.saved = None  # the app's token store: what token_updater saves, every instance's
        self.instances = {}  # instance number (2 and on) -> its own session
        self.lock = threading.Lock()

    def new_session(self, token=None):
        return OAuth2Session(
            client=LegacyApplicationClient(client_id=self.client_id, token=token),
            token=token,
            auto_refresh_url=self.base + "/oauth/token",
            auto_refresh_kwargs={"client_id": self.client_id, "client_secret": self.client_secret},
            token_updater=self.token_updater,
        )

    def token_updater(self, token):
        self.saved = token

    def instance(self, number):
        """The session of instance ``number``: the app's own, or one another
        instance built from the store at its first call and keeps."""
        if number == 1:
            return self.session
        with self.lock:
            if number not in self.instances:
                self.instances[number] = self.new_session(token=dict(self.saved or {}))
            return self.instances[number]

    def login(self, username, password):
        try:
            self.session.fetch_token(self.base + "/oauth/token", username=username, password=password,
                                     client_id=self.client_id, client_secret=self.client_secret)
            self.saved = self.session.token
            return {"outcome": "ok"}
        except OAuth2Error as error:
            return {"outcome": "http_error", "message": str(error)}

    def request(self, method, path, headers, body, instance=1):
        return session_call(self.instance(instance), self.base, method, path, headers, body, refused=OAuth2Error)


if __name__ == "__main__":
    serve("requests-oauthlib", requests_oauthlib.__version__, ["oauth2"], RequestsOAuthlibDriver, capabilities=("url", "instances"))
