#!/usr/bin/env python3
"""authmock driver for oauth2-client's CredentialManager.

Recipe, as the library's README gives it: a ``ServiceInformation`` (token
URL, client id and secret, scopes), a ``CredentialManager`` signed in with
``init_with_user_credentials(login, password)``, and the manager's own
``get``/``post``/``put``/``patch``/``delete`` for the API calls. The manager
keeps the access token in its ``requests`` session and, when a call gets a
401 whose JSON body says ``invalid_token``, refreshes and sends the call
once more. A failed refresh raises ``OAuthError`` with the token endpoint's
status: a refusal (400, 401) the application turns into "sign in again",
another status into an error message.
"""
import importlib.metadata
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

from oauth2_client.credentials_manager import CredentialManager, OAuthError, ServiceInformation  # noqa: E402
from authmock_driver import outcome, serve  # noqa: E402


class OAuth2ClientDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"]
        self.manager = CredentialManager(ServiceInformation(None, self.base + "/oauth/token", hello["clientId"], hello["clientSecret"], []))

    def login(self, username, password):
        try:
            self.manager.init_with_user_credentials(username, password)
        except OAuthError as error:
            return {"outcome": "http_error", "message": str(error)}
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        call = {"GET": self.manager.get, "POST": self.manager.post, "PUT": self.manager.put, "PATCH": self.manager.patch,
                "DELETE": self.manager.delete}.get(method)
        if call is None:
            return {"outcome": "unsupported", "message": f"CredentialManager has no {method} method"}
        url = path if path.startswith("http") else self.base + path
        try:
            response = call(url, headers=dict(headers), timeout=30, **({"data": body} if method in ("POST", "PUT", "PATCH") else {}))
        except OAuthError as error:
            # The error carries the token endpoint's status: a refusal (400,
            # 401) means signing in again; anything else (a 503) is an error
            # the app shows, the session kept.
            if error.status_code in (400, 401):
                return {"outcome": "reauth_required", "message": str(error)}
            return {"outcome": "http_error", "status": int(error.status_code), "message": str(error)}
        return outcome(response.status_code, response.text)


if __name__ == "__main__":
    serve("oauth2-client", importlib.metadata.version("oauth2-client"), ["oauth2"], OAuth2ClientDriver)
