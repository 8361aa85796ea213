#!/usr/bin/env python3
"""authmock driver for supabase-auth, Supabase's Python Auth client, unchanged.

Recipe, as supabase-py wires it (``supabase/_sync/client.py``): a
``SyncGoTrueClient`` for ``<project URL>/auth/v1`` with its defaults
(``auto_refresh_token=True``, the session in memory), signed in with
``sign_in_with_password``, and an auth state listener that puts the session's
access token on every Data API call (supabase-py re-keys its PostgREST
client on SIGNED_IN and TOKEN_REFRESHED). The SDK refreshes by its own clock
only: a timer at ``expires_at`` minus 10 s (half a second for shorter
tokens). It never looks at a 401. The app learns that the session is over
from the SIGNED_OUT event, which it answers with the sign-in screen.

Run it against the built-in ``supabase`` profile:
``authmock run --profile supabase --driver "python3 drivers/python-supabase-auth/driver.py"``.
"""
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import httpx  # noqa: E402
from supabase_auth import SyncGoTrueClient  # noqa: E402
from supabase_auth.errors import AuthError  # noqa: E402
from supabase_auth.version import __version__  # noqa: E402
from authmock_driver import outcome, serve  # noqa: E402

# Any string: authmock, like a local Supabase stack's gateway in tests, takes any key.
ANON_KEY = "authmock-anon-key"


class SupabaseAuthDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"].rstrip("/")
        self.lock = threading.Lock()
        self.access_token = None
        self.signed_out = False
        self.auth = SyncGoTrueClient(url=self.base + "/auth/v1", headers={"apikey": ANON_KEY, "Authorization": f"Bearer {ANON_KEY}"})
        self.auth.on_auth_state_change(self.on_auth_state_change)
        self.http = httpx.Client(timeout=30)

    def on_auth_state_change(self, event, session):
        # What supabase-py's `_listen_to_auth_events` does with its PostgREST headers.
        with self.lock:
            if event in ("SIGNED_IN", "TOKEN_REFRESHED") and session:
                self.access_token, self.signed_out = session.access_token, False
            elif event == "SIGNED_OUT":
                self.access_token, self.signed_out = None, True

    def login(self, username, password):
        try:
            self.auth.sign_in_with_password({"email": username, "password": password})
            return {"outcome": "ok"}
        except AuthError as error:
            return {"outcome": "http_error", "status": getattr(error, "status", 0), "message": str(error)}

    def request(self, method, path, headers, body):
        with self.lock:
            token, signed_out = self.access_token, self.signed_out
        if signed_out:
            return {"outcome": "reauth_required", "message": "SIGNED_OUT: the session is over"}
        own = not path.startswith("http")
        url = self.base + path if own else path
        headers = dict(headers)
        if own:
            # The project's key and the user's token go to the project only.
            headers.update({"apikey": ANON_KEY, "Authorization": f"Bearer {token or ANON_KEY}"})
        response = self.http.request(method, url, headers=headers, content=body.encode() if body is not None else None)
        return outcome(response.status_code, response.text)


if __name__ == "__main__":
    serve("supabase-auth", __version__, ["supabase"], SupabaseAuthDriver)
