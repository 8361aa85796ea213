#!/usr/bin/env python3
"""authmock driver for aiohttp-oauth2-client's OAuth2Middleware.

Recipe, as the library's README gives it ("Usage"): a grant
(``ResourceOwnerPasswordCredentialsGrant(token_url, username, password,
client_id=..., client_secret=...)``) and ``ClientSession(middlewares=
(OAuth2Middleware(grant),))``. The middleware adds the grant's token to
each request; the grant renews it with its refresh token once it is
expired by ``expires_in`` (30 seconds early), under an ``asyncio.Lock``,
before the request is sent. It never looks at a 401. A refused refresh
raises ``OAuth2Error``, which the application turns into "sign in again".

aiohttp is asynchronous: the driver runs one event loop on a thread of its
own and hands it each call; the calls run concurrently on that loop, as in
an asyncio app. Signing in fetches the first token (``grant.fetch_token()``,
what the first request would do), so the tokens exist when the app says
the user signed in.

The protocol's ``cancel`` extension cancels the call's asyncio task, as an
app cancels a task whose screen closed.
"""
import asyncio
import concurrent.futures
import importlib.metadata
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import aiohttp  # noqa: E402
from aiohttp_oauth2_client.grant.resource_owner_password_credentials import ResourceOwnerPasswordCredentialsGrant  # noqa: E402
from aiohttp_oauth2_client.middleware import OAuth2Middleware  # noqa: E402
from aiohttp_oauth2_client.models.errors import OAuth2Error  # noqa: E402
from authmock_driver import outcome, serve  # noqa: E402


class AiohttpOAuth2ClientDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"]
        self.client_id, self.client_secret = hello["clientId"], hello["clientSecret"]
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.session = None
        # The calls in flight by X-Authmock-Call, and the calls a cancel named
        # (one may arrive just before its call's thread has registered it).
        self.calls, self.cancelled, self.guard = {}, set(), threading.Lock()

    def run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def login(self, username, password):
        return self.run(self._login(username, password))

    async def _login(self, username, password):
        grant = ResourceOwnerPasswordCredentialsGrant(self.base + "/oauth/token", username, password,
                                                      client_id=self.client_id, client_secret=self.client_secret)
        try:
            await grant.fetch_token()
        except (OAuth2Error, aiohttp.ClientResponseError) as error:
            await grant.close()
            return {"outcome": "http_error", "message": str(error)}
        self.session = aiohttp.ClientSession(middlewares=(OAuth2Middleware(grant),))
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        call = headers.get("X-Authmock-Call")
        future = asyncio.run_coroutine_threadsafe(self._request(method, path, headers, body), self.loop)
        with self.guard:
            self.calls[call] = future
            if call in self.cancelled:
                future.cancel()
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            return {"outcome": "cancelled", "message": "the call's task was cancelled"}
        finally:
            with self.guard:
                self.calls.pop(call, None)

    def cancel(self, call):
        # Cancelling the future cancels its task on the loop (asyncio.run_coroutine_threadsafe).
        with self.guard:
            self.cancelled.add(call)
            future = self.calls.get(call)
        if future is not None:
            future.cancel()

    async def _request(self, method, path, headers, body):
        if self.session is None:
            return {"outcome": "reauth_required", "message": "not signed in"}
        url = path if path.startswith("http") else self.base + path
        try:
            async with self.session.request(method, url, headers=headers, data=body, timeout=aiohttp.ClientTimeout(total=30)) as response:
                return outcome(response.status, await response.text())
        except OAuth2Error as error:  # the refresh was refused: the app shows its login screen
            return {"outcome": "reauth_required", "message": str(error)}


if __name__ == "__main__":
    serve("aiohttp-oauth2-client", importlib.metadata.version("aiohttp-oauth2-client"), ["oauth2"], AiohttpOAuth2ClientDriver,
          capabilities=("url", "cancel"))
