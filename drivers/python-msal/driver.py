#!/usr/bin/env python3
"""authmock driver for MSAL for Python (Microsoft Entra ID), unchanged.

Recipe, as Microsoft's MSAL Python samples write it: a
``PublicClientApplication`` whose authority is the tenant (here on authmock,
``instance_discovery=False`` as for any authority that is not Microsoft's),
and before every call ``acquire_token_silent(scopes, account)``: MSAL answers
from its token cache, or renews with the cached refresh token when the access
token has under five minutes left by the device clock. ``None`` means the app
must sign the user in again. The token goes on the call as a bearer token;
the samples do nothing with a 401 (a claims challenge aside, which authmock
does not send).

Sign-in: ``acquire_token_by_username_password``, as the samples' username and
password flow calls it. MSAL first asks user realm discovery at
``https://HOST/common/userrealm/...``, on port 443 whatever the authority's
port (msal/authority.py ``user_realm_discovery``): the session sends requests
for the authority's host without a port to the authority's port, as an
Entra tenant on 443 would receive them. authmock answers that probe 404,
which MSAL reads as "not federated" before its password grant.

MSAL talks HTTPS only: the driver declares the ``tls`` capability, and the
runner serves its cases over HTTPS with the certificate in
``AUTHMOCK_CA_FILE``. Run it against the built-in ``entra`` profile:
``authmock run --profile entra --driver "python3 drivers/python-msal/driver.py"``.
"""
import importlib.metadata
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import msal  # noqa: E402
import requests  # noqa: E402
from authmock_driver import outcome, serve  # noqa: E402

# The built-in dialect's tenant (docs/dialects/entra.md).
TENANT = "f8cdef31-a31e-4b4a-93e4-5f571e91255a"
SCOPES = ["User.Read"]


class AuthorityPortSession(requests.Session):
    """A session that sends ``https://HOST/...`` to the authority's port."""

    def __init__(self, base):
        super().__init__()
        scheme, _, rest = base.partition("://")
        host = rest.split("/")[0]
        self.without_port = f"{scheme}://{host.rsplit(':', 1)[0]}/"
        self.with_port = f"{scheme}://{host}/"

    def request(self, method, url, *args, **kwargs):
        if url.startswith(self.without_port):
            url = self.with_port + url[len(self.without_port):]
        return super().request(method, url, *args, **kwargs)


class MsalDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"].rstrip("/")
        self.client_id = hello.get("clientId") or "demo"
        self.session = AuthorityPortSession(self.base)
        # The run's certificate, trusted as an app's test setup would; requests
        # lets REQUESTS_CA_BUNDLE (set on many machines) win over `verify`.
        self.session.verify = os.environ.get("AUTHMOCK_CA_FILE", True)
        self.session.trust_env = False
        self.app, self.account = None, None

    def login(self, username, password):
        # Built here, not at hello: the run's first hello, which learns that
        # this driver wants TLS, comes from a plain HTTP server.
        self.app = msal.PublicClientApplication(
            self.client_id, authority=f"{self.base}/{TENANT}", instance_discovery=False, http_client=self.session
        )
        result = self.app.acquire_token_by_username_password(username, password, scopes=SCOPES)
        if "access_token" not in result:
            return {"outcome": "http_error", "message": f"{result.get('error')}: {result.get('error_description')}"}
        accounts = self.app.get_accounts(username=username)
        if not accounts:
            return {"outcome": "http_error", "message": "MSAL built no account from the id token"}
        self.account = accounts[0]
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        if path.startswith("http"):
            # Another host: the app's plain requests, without the tenant's token.
            response = self.session.request(method, path, headers=headers, data=body, timeout=30)
            return outcome(response.status_code, response.text)
        result = self.app.acquire_token_silent(SCOPES, account=self.account) if self.account else None
        if not result:
            # The samples' answer to None: sign the user in again.
            return {"outcome": "reauth_required", "message": "acquire_token_silent returned None"}
        response = self.session.request(method, self.base + path, headers={**headers, "Authorization": "Bearer " + result["access_token"]},
                                        data=body, timeout=30)
        return outcome(response.status_code, response.text)


if __name__ == "__main__":
    serve("msal", importlib.metadata.version("msal"), ["entra"], MsalDriver, capabilities=("url", "tls"))
