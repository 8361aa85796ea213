#!/usr/bin/env python3
"""authmock driver for pycognito (Amazon Cognito user pools for Python), unchanged.

Recipe, as pycognito's README shows it for an app that already holds tokens:
boto3's cognito-idp client signs in with ``USER_PASSWORD_AUTH`` (pycognito's
own ``authenticate`` is SRP, which authmock does not speak), the tokens go
into ``Cognito(user_pool_id, client_id, id_token=..., access_token=...,
refresh_token=...)``, and every call goes through requests with pycognito's
``RequestsSrpAuth(cognito=...)``: before each request it runs
``check_token()``, which renews the access token with REFRESH_TOKEN_AUTH
once the device clock is past its ``exp``, and verifies the new tokens
against the pool's JWKS. It never looks at a 401. A refused renewal is
botocore's ``ClientError`` (``NotAuthorizedException``): the app shows its
sign-in screen.

Run it against the built-in ``cognito`` profile:
``authmock run --profile cognito --driver "python3 drivers/python-pycognito/driver.py"``.
"""
import importlib.metadata
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python-common"))

import boto3  # noqa: E402
import requests  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from pycognito import Cognito  # noqa: E402
from pycognito.utils import RequestsSrpAuth  # noqa: E402
from authmock_driver import outcome, serve, session_call  # noqa: E402

# The built-in dialect's user pool (docs/dialects/cognito.md); any credentials:
# InitiateAuth is not signed.
POOL = "us-east-1_authmock"


class PycognitoDriver:
    def __init__(self, hello):
        self.base = hello["baseURL"].rstrip("/")
        self.client_id = os.environ.get("AUTHMOCK_CLIENT_ID", "demo")
        self.aws = {"endpoint_url": self.base, "aws_access_key_id": "authmock", "aws_secret_access_key": "authmock"}
        self.client = boto3.client("cognito-idp", region_name="us-east-1", **self.aws)
        self.session = requests.Session()

    def login(self, username, password):
        try:
            tokens = self.client.initiate_auth(
                AuthFlow="USER_PASSWORD_AUTH", ClientId=self.client_id, AuthParameters={"USERNAME": username, "PASSWORD": password}
            )["AuthenticationResult"]
        except ClientError as error:
            return {"outcome": "http_error", "status": error.response["ResponseMetadata"]["HTTPStatusCode"], "message": str(error)}
        user = Cognito(POOL, self.client_id, username=username, id_token=tokens["IdToken"], access_token=tokens["AccessToken"],
                       refresh_token=tokens["RefreshToken"], boto3_client_kwargs=dict(self.aws))
        self.session.auth = RequestsSrpAuth(cognito=user)
        return {"outcome": "ok"}

    def request(self, method, path, headers, body):
        if not path.startswith("http"):
            return session_call(self.session, self.base, method, path, headers, body, ClientError)
        # Another host: the app's plain requests, without the user pool's token.
        response = requests.request(method, path, headers=headers, data=body, timeout=30)
        return outcome(response.status_code, response.text)


if __name__ == "__main__":
    serve("pycognito", importlib.metadata.version("pycognito"), ["cognito"], PycognitoDriver)
