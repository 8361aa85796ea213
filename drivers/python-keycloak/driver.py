#!/usr/bin/env python3
"""authmock driver for python-keycloak, unchanged.

Recipe: python-keycloak's ``KeycloakOpenIDConnection``, the connection its
``KeycloakAdmin`` runs on, signed in with the password grant
(``grant_type="password"``) and every call through its ``raw_get``,
``raw_post``, ``raw_put`` or ``raw_delete``: before a call it renews when
its clock is past the token's ``expires_in`` (``_refresh_if_required``),
and on a 401 it refreshes and sends the call once more. When Keycloak
answers a refresh "Token is not active" or "Session not active" it signs
in again with the stored password (``refresh_token``).

Test setup, not refresh glue: the connection sends only its own headers,
so the runner's per-call headers (``X-Authmock-Call``, a call's
``Content-Type``) are added by the transport for the thread making the call
(each call runs on a thread of its own), never to the token endpoint.

Run it against the built-in ``keycloak`` profile:
``authmock run --profile keycloak --driver "python3 drivers/python-keycloak/driver.py"``.
"""
import importlib.metadata
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import requests  # noqa: E402
from requests.adapters import HTTPAdapter  # noqa: E402
from keycloak import KeycloakOpenIDConnection  # noqa: E402
from keycloak.exceptions import KeycloakConnectionError, KeycloakError  # noqa: E402
from authmock_driver import outcome, serve  # noqa: E402

# The built-in dialect's realm and client (docs/dialects/keycloak.md).
REALM, CLIENT = "authmock", "authmock-app"
TOKEN_ENDPOINTS = "/protocol/openid-connect/"


class Call(threading.local):
    """The call this thread is making: its headers, and whether it went out."""
    headers = None
    sent = False


CALL = Call()
_send = HTTPAdapter.send


def _send_with_call_headers(adapter, request, *args, **kwargs):
    if CALL.headers is not None and TOKEN_ENDPOINTS not in request.url:
        request.headers.update(CALL.headers)
        CALL.sent = True
    return _send(adapter, request, *args, **kwargs)


HTTPAdapter.send = _send_with_call_headers


class KeycloakDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"].rstrip("/")
        self.connection = None

    def login(self, username, password):
        connection = KeycloakOpenIDConnection(server_url=self.base + "/", realm_name=REALM, client_id=CLIENT, username=username,
                                              password=password, grant_type="password")
        try:
            connection.get_token()
        except KeycloakError as error:
            return {"outcome": "http_error", "status": error.response_code, "message": str(error)}
        self.connection = connection
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        if path.startswith("http"):
            # Another host: the app's plain requests, without the realm's token.
            response = requests.request(method, path, headers=headers, data=body, timeout=30)
            return outcome(response.status_code, response.text)
        CALL.headers, CALL.sent = headers, False
        try:
            if method == "GET":
                response = self.connection.raw_get(path)
            elif method == "POST":
                response = self.connection.raw_post(path, data=body or "")
            elif method == "PUT":
                response = self.connection.raw_put(path, data=body or "")
            elif method == "DELETE":
                response = self.connection.raw_delete(path)
            else:
                return {"outcome": "unsupported", "message": f"KeycloakOpenIDConnection has no raw_{method.lower()}"}
        except KeycloakConnectionError as error:
            return {"outcome": "transport_error", "message": str(error)}
        except KeycloakError as error:
            # A refused refresh (and the sign-in it fell back to): the app
            # shows its sign-in screen. Any other answer is an error the app sees.
            if error.response_code in (400, 401, 403):
                return {"outcome": "reauth_required", "status": error.response_code, "message": str(error)}
            kind = "http_error" if CALL.sent else "refresh_failed"
            return {"outcome": kind, "status": error.response_code, "message": str(error)}
        finally:
            CALL.headers = None
        return outcome(response.status_code, response.text)


if __name__ == "__main__":
    serve("python-keycloak", importlib.metadata.version("python-keycloak"), ["keycloak"], KeycloakDriver)
