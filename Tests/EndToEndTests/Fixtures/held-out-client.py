#!/usr/bin/env python3
"""A refresh client written from docs/driver-protocol.md and the Python
helper's docstring alone, not from authmock's reference client.

It is the held-out check of the cases about signing out, account switches,
cancelled callers, an app and its extension, and coming back online (9.x):
a correct client nobody tuned to those cases must pass them, and each
``--bug`` below (one mistake a public report describes) must be caught by
its case (HeldOutClientTests).

The client: RFC 8414 metadata; the password grant with client_secret_basic;
one token store per app (its extensions share it); a refresh on a 401 with
a Bearer challenge (or none) and when its own clock says the token ran out,
one refresh at a time per login, sent again at once when no answer came;
a refresh answer belongs to the login that
asked for it; a short Retry-After honoured once; sign-out forgets the tokens
and revokes the refresh token (RFC 7009).
"""
import argparse
import base64
import copy
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../drivers/python-common"))
import authmock_driver  # noqa: E402

BUGS = {
    # The refresh is the cancelled caller's: cancelling the call abandons it (KTOR-8285).
    "cancel-drops-refresh",
    # An extension copies the tokens when it starts and refreshes its copy (opencloud-eu/ios#43).
    "store-copy-per-instance",
    # A refresh answer is stored whatever happened meanwhile (supabase/supabase-swift#1374).
    "late-answer-overwrites",
    # The request path reads a token cache that a new sign-in does not replace (Ktor's loadTokens).
    "cache-survives-sign-in",
    # Sign-out forgets the tokens but never tells the server.
    "sign-out-locally-only",
    # A connectivity listener refreshes when the network returns (supabase-kt#1060).
    "refresh-on-reconnect",
    # A refresh that got no answer is tried again only with the next call.
    "retry-lost-refresh-later",
}


class Login:
    """One sign-in's tokens; a refresh updates them in place."""

    def __init__(self, tokens):
        self.access, self.refresh, self.expires_at = None, None, None
        self.take(tokens)

    def take(self, tokens):
        self.access = tokens["access_token"]
        self.refresh = tokens.get("refresh_token", self.refresh)
        lifetime = tokens.get("expires_in")
        self.expires_at = time.monotonic() + float(lifetime) if lifetime is not None else None


class Flight:
    """A refresh in progress, for one login; every caller of that login waits for it."""

    def __init__(self, login, owner):
        self.login, self.owner = login, owner
        self.done = threading.Event()
        self.abandoned = False
        self.result = None  # "refreshed", "refused", or ("failed", status)


class Store:
    """The app's token store: the current login and its refresh in flight."""

    def __init__(self, bugs):
        self.bugs = bugs
        self.lock = threading.Lock()
        self.login = None
        self.flight = None
        self.cache = None  # "cache-survives-sign-in" only

    def current(self):
        with self.lock:
            if "cache-survives-sign-in" in self.bugs:
                if self.cache is None:
                    self.cache = self.login
                return self.cache
            return self.login


class Client:
    def __init__(self, hello, bugs):
        self.bugs = bugs
        self.base = hello["baseURL"]
        self.basic = "Basic " + base64.b64encode(f'{hello["clientId"]}:{hello["clientSecret"]}'.encode()).decode()
        status, text, _ = self.http("GET", self.base + "/.well-known/oauth-authorization-server", {})
        metadata = json.loads(text) if status == 200 else {}
        self.token_endpoint = metadata.get("token_endpoint", self.base + "/oauth/token")
        self.revocation_endpoint = metadata.get("revocation_endpoint")
        self.store = Store(bugs)
        self.instances = {}  # instance number -> its store ("store-copy-per-instance" only)
        self.instances_lock = threading.Lock()
        self.cancelled = {}  # call id -> set when the app cancelled it
        self.offline = False  # "refresh-on-reconnect" only

    # --- HTTP ---

    def http(self, method, url, headers, body=None, retry_after=True):
        """(status, text, challenge); status 0 when no HTTP answer came."""
        request = urllib.request.Request(url, None if body is None else body.encode(), headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read().decode(), ""
        except urllib.error.HTTPError as error:
            if error.code in (429, 503) and retry_after and error.headers.get("Retry-After", "").isdigit():
                wait = int(error.headers["Retry-After"])
                if wait <= 10:  # the server asked to come back shortly: once, after that
                    time.sleep(wait)
                    return self.http(method, url, headers, body, retry_after=False)
            return error.code, error.read().decode(), ", ".join(error.headers.get_all("WWW-Authenticate") or [])
        except OSError as error:
            return 0, str(error), ""

    def token_request(self, form):
        headers = {"Authorization": self.basic, "Content-Type": "application/x-www-form-urlencoded"}
        status, text, _ = self.http("POST", self.token_endpoint, headers, urllib.parse.urlencode(form))
        return status, text

    # --- the driver's operations ---

    def login(self, username, password):
        status, text = self.token_request({"grant_type": "password", "username": username, "password": password})
        if status != 200:
            return {"outcome": "http_error", "status": status, "message": text[:200]}
        with self.store.lock:
            self.store.login = Login(json.loads(text))
        return {"outcome": "ok", "status": status}

    def logout(self):
        with self.store.lock:
            login, self.store.login, self.store.cache = self.store.login, None, None
        if login and self.revocation_endpoint and "sign-out-locally-only" not in self.bugs:
            headers = {"Authorization": self.basic, "Content-Type": "application/x-www-form-urlencoded"}
            form = {"token": login.refresh, "token_type_hint": "refresh_token"}
            self.http("POST", self.revocation_endpoint, headers, urllib.parse.urlencode(form))
        return {"outcome": "ok"}

    def cancel(self, call):
        event = self.cancelled.setdefault(call, threading.Event())
        event.set()
        if "cancel-drops-refresh" in self.bugs:
            store = self.store
            with store.lock:
                if store.flight and store.flight.owner == call:
                    store.flight.abandoned = True
                    store.flight.done.set()
                    store.flight = None

    def request(self, method, path, headers, body, instance=1):
        call = headers.get("X-Authmock-Call", "")
        cancelled = self.cancelled.setdefault(call, threading.Event())
        store = self.store_of(instance)
        if "refresh-on-reconnect" in self.bugs and self.offline:
            self.offline = False
            threading.Thread(target=self.refresh_now, args=(store,), daemon=True).start()
        login = store.current()
        if login is None:
            return {"outcome": "reauth_required", "message": "not signed in"}
        if login.expires_at is not None and time.monotonic() >= login.expires_at:
            result = self.renew(store, login, login.access, call)
            if cancelled.is_set():
                return {"outcome": "cancelled"}
            if isinstance(result, tuple):
                return {"outcome": "refresh_failed", **({"status": result[1]} if result[1] else {})}
            if store.current() is not login:
                return {"outcome": "reauth_required", "message": "signed out while renewing"}
        url = path if path.startswith("http") else self.base + path
        for attempt in (1, 2):
            if cancelled.is_set():
                return {"outcome": "cancelled"}
            sent = login.access
            auth = {"Authorization": "Bearer " + sent} if url.startswith(self.base) else {}
            status, text, challenge = self.http(method, url, {**headers, **auth}, body)
            if status == 0:
                if "refresh-on-reconnect" in self.bugs:
                    self.offline = True
                return {"outcome": "transport_error", "message": text}
            # RFC 6750: a 401 with a Bearer challenge (anywhere in the header),
            # or with none at all, says the token is the problem; another
            # scheme's challenge alone is not about this token.
            expired = status == 401 and auth and (not challenge or "bearer" in challenge.lower())
            if not expired or attempt == 2:
                return authmock_driver.outcome(status, text)
            result = self.renew(store, login, sent, call)
            if cancelled.is_set():
                return {"outcome": "cancelled"}
            if result == "refused" or store.current() is not login:
                return {"outcome": "reauth_required", "status": 401, "message": "the session ended"}
            if isinstance(result, tuple):
                return authmock_driver.outcome(status, text)  # the refresh failed for now: the app gets the 401

    # --- refreshing ---

    def renew(self, store, login, sent, call):
        """One refresh per login at a time. Returns "refreshed", "refused" or ("failed", status)."""
        with store.lock:
            if store.login is not login and store.cache is not login:
                return "refused"
            if login.access != sent:
                return "refreshed"  # another caller renewed it meanwhile
            flight = store.flight
            owner = flight is None or flight.login is not login
            if owner:
                flight = store.flight = Flight(login, call)
        if not owner:
            flight.done.wait(60)
            return flight.result or ("failed", None)
        status, text = self.token_request({"grant_type": "refresh_token", "refresh_token": login.refresh})
        if status == 0 and "retry-lost-refresh-later" not in self.bugs:
            # No answer: the server may have rotated the token and the answer been
            # lost. Once more at once, inside a grace window for the rotated token.
            status, text = self.token_request({"grant_type": "refresh_token", "refresh_token": login.refresh})
        with store.lock:
            if flight.abandoned:
                return ("failed", None)
            if status == 200:
                mine = store.login is login or store.cache is login
                if mine:
                    login.take(json.loads(text))
                elif "late-answer-overwrites" in self.bugs:
                    login.take(json.loads(text))
                    store.login = login
                flight.result = "refreshed" if mine or "late-answer-overwrites" in self.bugs else "refused"
            elif status in (400, 401, 403):
                if store.login is login:
                    store.login = None
                flight.result = "refused"
            else:
                flight.result = ("failed", status or None)
            if store.flight is flight:
                store.flight = None
            flight.done.set()
        return flight.result

    def refresh_now(self, store):
        """The "refresh-on-reconnect" listener: a refresh of its own, beside the calls'."""
        login = store.current()
        if login is None:
            return
        status, text = self.token_request({"grant_type": "refresh_token", "refresh_token": login.refresh})
        if status == 200:
            with store.lock:
                login.take(json.loads(text))

    def store_of(self, instance):
        if instance == 1 or "store-copy-per-instance" not in self.bugs:
            return self.store
        with self.instances_lock:
            if instance not in self.instances:
                mine = Store(self.bugs)
                mine.login = copy.copy(self.store.current())
                self.instances[instance] = mine
            return self.instances[instance]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bug", action="append", default=[], choices=sorted(BUGS))
    bugs = set(parser.parse_args().bug)
    authmock_driver.serve(
        "held-out-client", "1", ["oauth2"], lambda hello: Client(hello, bugs), capabilities=("cancel", "instances", "logout"))


if __name__ == "__main__":
    main()
