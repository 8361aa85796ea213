#!/usr/bin/env python3
"""authmock driver for gql (Python GraphQL client) over httpx, with token refresh.

Recipe, as the two libraries' documentation gives it: gql's sync
``HTTPXTransport`` passes its keyword arguments to ``httpx.Client``, so the
token is handled by an ``httpx.Auth`` (gql's "Authentication" section), and
that auth is httpx's own documented refresh flow ("Custom authentication
schemes", the ``requires_response_body`` example): attach the token, and when
the answer is a 401, send a refresh request, store the new tokens and send
the request once more. A refused refresh raises, and the application turns
that into "sign in again". GraphQL errors in a 200 body reach the
application as gql's ``TransportQueryError``: neither library reads them
for the token, which is the case the GraphQL scenarios are about.

The client speaks GraphQL only: a request to anything but ``/graphql`` is
answered ``unsupported`` (that case is SKIP).
"""
import base64
import json
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import gql  # noqa: E402
import httpx  # noqa: E402
from gql import Client, GraphQLRequest  # noqa: E402
from gql.transport.exceptions import TransportConnectionFailed, TransportQueryError, TransportServerError  # noqa: E402
from gql.transport.httpx import HTTPXTransport  # noqa: E402
from authmock_driver import serve  # noqa: E402


class SignInAgain(Exception):
    """The refresh was refused: the application shows its login screen."""


class RefreshingAuth(httpx.Auth):
    """httpx's documented refresh-on-401 flow, shared by every call of the app."""

    requires_response_body = True

    def __init__(self, token_url, client_id, client_secret):
        self.token_url = token_url
        self.basic = (client_id, client_secret)
        self.access_token = None
        self.refresh_token = None

    def auth_flow(self, request):
        request.headers["Authorization"] = f"Bearer {self.access_token}"
        response = yield request
        if response.status_code == 401:
            refresh_response = yield self.build_refresh_request()
            self.update_tokens(refresh_response)
            request.headers["Authorization"] = f"Bearer {self.access_token}"
            yield request

    def build_refresh_request(self):
        # A request the flow yields is sent as it is: client authentication goes in by hand.
        basic = base64.b64encode(f"{self.basic[0]}:{self.basic[1]}".encode()).decode()
        return httpx.Request(
            "POST", self.token_url, headers={"Authorization": f"Basic {basic}"},
            data={"grant_type": "refresh_token", "refresh_token": self.refresh_token or ""})

    def update_tokens(self, response):
        if response.status_code != 200:
            raise SignInAgain(f"refresh refused: {response.status_code} {response.text[:200]}")
        token = response.json()
        self.access_token = token["access_token"]
        self.refresh_token = token.get("refresh_token", self.refresh_token)


class GqlDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"]
        self.client_id, self.client_secret = hello["clientId"], hello["clientSecret"]
        self.auth = RefreshingAuth(self.base + "/oauth/token", self.client_id, self.client_secret)

    def login(self, username, password):
        response = httpx.post(
            self.base + "/oauth/token", auth=(self.client_id, self.client_secret), timeout=30,
            data={"grant_type": "password", "username": username, "password": password})
        if response.status_code != 200:
            return {"outcome": "http_error", "status": response.status_code, "body": response.text}
        self.auth.update_tokens(response)
        return {"outcome": "ok", "status": 200}

    def request(self, method, path, headers, body):
        if method != "POST" or path.split("?")[0] != "/graphql":
            return {"outcome": "unsupported", "message": "gql is a GraphQL client: only POST /graphql"}
        payload = json.loads(body or "{}")
        statuses = []
        headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        # One transport per call: a sync gql transport holds one connection
        # and is not shared between threads; the auth (the token store) is.
        transport = HTTPXTransport(
            url=self.base + "/graphql", headers=headers, auth=self.auth, timeout=30,
            event_hooks={"response": [lambda r: statuses.append(r.status_code)]})
        request = GraphQLRequest(
            payload["query"], variable_values=payload.get("variables"), operation_name=payload.get("operationName"))
        try:
            with Client(transport=transport) as session:
                data = session.execute(request)
            return {"outcome": "ok", "status": statuses[-1] if statuses else 200, "body": json.dumps({"data": data})}
        except TransportConnectionFailed as error:
            # gql wraps whatever the HTTP client raised, the auth's refusal included.
            if isinstance(error.__cause__, SignInAgain):
                return {"outcome": "reauth_required", "message": str(error.__cause__)}
            return {"outcome": "transport_error", "message": str(error)[:300]}
        except TransportQueryError as error:  # errors in the body reach the app
            return {"outcome": "http_error", "status": statuses[-1] if statuses else 200, "message": str(error)[:300]}
        except TransportServerError as error:
            return {"outcome": "http_error", "status": error.code, "message": str(error)[:300]}


if __name__ == "__main__":
    serve("gql-httpx", gql.__version__, ["oauth2"], GqlDriver, capabilities=("url", "graphql"))
