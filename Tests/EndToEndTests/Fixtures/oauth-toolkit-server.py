"""A real django-oauth-toolkit server: a token endpoint with the password
grant at /oauth/token (Laravel Passport's path) and an API behind DRF's
OAuth2Authentication, with DOT's default rotation (ROTATE_REFRESH_TOKEN: a
refresh revokes the refresh token it was given and deletes the access token
issued with it; no family revocation without REFRESH_TOKEN_REUSE_PROTECTION).
That is Passport's token policy, so scripts/fidelity.py compares which tokens
work after which requests here and in authmock's passport dialect. Binds a
free loopback port and prints one JSON line: the port, the client, and an
access token already expired (the real server's clock cannot be moved).
`--reuse-protection` turns on REFRESH_TOKEN_REUSE_PROTECTION (RFC 9700
reuse detection: a rotated token presented again revokes its family), the
policy of authmock's oauth2 profile, for scripts/fidelity.py. RFC 7009
revocation answers at /oauth/revoke, as in the oauth2 profile."""
import sys

from django_fixture import alice, configure, serve

configure(
    __name__,
    ["oauth2_provider"],
    REST_FRAMEWORK={"DEFAULT_AUTHENTICATION_CLASSES": ["oauth2_provider.contrib.rest_framework.OAuth2Authentication"]},
    OAUTH2_PROVIDER={"ROTATE_REFRESH_TOKEN": True, "REFRESH_TOKEN_REUSE_PROTECTION": "--reuse-protection" in sys.argv[1:]},
)

from django.urls import path  # noqa: E402
from oauth2_provider.views import RevokeTokenView, TokenView  # noqa: E402
from rest_framework.decorators import api_view, permission_classes  # noqa: E402
from rest_framework.permissions import IsAuthenticated  # noqa: E402
from rest_framework.response import Response  # noqa: E402


@api_view(["GET"])
@permission_classes([IsAuthenticated])
def me(request):
    return Response({"sub": request.user.username})


urlpatterns = [
    path("oauth/token", TokenView.as_view()),
    path("oauth/revoke", RevokeTokenView.as_view()),
    path("api/me", me),
]

if __name__ == "__main__":
    import datetime

    from django.utils import timezone
    from oauth2_provider.models import AccessToken, Application

    secret = "authmock-client-secret"
    user = alice()
    application = Application.objects.create(
        client_id="demo", client_secret=secret, user=user, name="demo",
        client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type=Application.GRANT_PASSWORD,
    )
    expired = AccessToken.objects.create(
        user=user, application=application, token="expired-" + application.client_id + "-0123456789",
        expires=timezone.now() - datetime.timedelta(seconds=60), scope="read write",
    )
    serve({"client_id": "demo", "client_secret": secret, "expired_access": expired.token})
