"""An OpenID Connect client as an app would configure one: only the issuer
URL. Authlib's own OIDC client (discovery, authorization code with PKCE and
nonce, id token validation against the JWKS, refetched on an unknown kid)
signs in, refreshes, and validates every id token; joserfc checks each one
on its own against the published keys. Between sign-in and refresh the
test may rotate the server's key (--rotate CONTROL_URL).

    python3 oidc-client.py ISSUER [--rotate]

Prints one JSON object with what it validated; exits non-zero on any failure.
"""
import json
import secrets
import sys
from urllib.parse import parse_qs, urlparse

import requests
from authlib.integrations.base_client import BaseApp, FrameworkIntegration, OAuth2Mixin, OpenIDMixin
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet


class OIDCClient(OAuth2Mixin, OpenIDMixin, BaseApp):
    client_cls = OAuth2Session


def main():
    issuer = sys.argv[1]
    rotate = "--rotate" in sys.argv
    app = OIDCClient(
        FrameworkIntegration("authmock"), name="authmock", client_id="demo", client_secret="demo-secret",
        server_metadata_url=issuer + "/.well-known/openid-configuration",
        client_kwargs={"scope": "openid profile email", "code_challenge_method": "S256"},
    )
    redirect_uri = "http://127.0.0.1/callback"
    nonce = secrets.token_urlsafe(16)
    request = app.create_authorization_url(redirect_uri=redirect_uri, nonce=nonce)
    answer = requests.get(request["url"], allow_redirects=False, timeout=10)
    query = parse_qs(urlparse(answer.headers["Location"]).query)
    assert query["state"] == [request["state"]], query
    token = app.fetch_access_token(redirect_uri=redirect_uri, code=query["code"][0], code_verifier=request["code_verifier"])
    signed_in = app.parse_id_token(token, nonce=nonce)
    metadata = app.load_server_metadata()

    def independently(id_token):
        keys = KeySet.import_key_set(requests.get(metadata["jwks_uri"], timeout=10).json())
        return jwt.decode(id_token, keys, algorithms=metadata["id_token_signing_alg_values_supported"])

    first = independently(token["id_token"])
    if rotate:
        control = issuer + "/_authmock/keys/rotate"
        assert requests.post(control, json={"graceSeconds": 600}, timeout=10).status_code == 200
    # The refresh as an app's token store does it (the framework integration would save the result).
    with OAuth2Session("demo", "demo-secret", token=token) as session:
        refreshed = session.refresh_token(metadata["token_endpoint"])
    # OIDC Core 12.2: a refreshed id token has the sign-in's iss, sub, aud and auth_time, and no nonce.
    again = app.parse_id_token(refreshed, nonce=None)
    for claim in ("iss", "sub", "aud", "auth_time"):
        assert again[claim] == signed_in[claim], (claim, again[claim], signed_in[claim])
    second = independently(refreshed["id_token"])
    userinfo = app.userinfo(token=refreshed)
    assert userinfo["sub"] == signed_in["sub"]
    print(json.dumps({
        "sub": signed_in["sub"], "email": signed_in.get("email"), "nonce": signed_in.get("nonce"),
        "refreshedNonce": again.get("nonce"), "kids": [first.header["kid"], second.header["kid"]],
        "alg": first.header["alg"], "userinfo": dict(userinfo),
    }))


if __name__ == "__main__":
    main()
