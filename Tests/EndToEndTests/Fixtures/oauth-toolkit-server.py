"""A real django-oauth-toolkit server: a token endpoint with the password
grant at /oauth/token (Laravel Passport's path) and an API behind DRF's
OAuth2Authentication, with DOT's default rotation (ROTATE_REFRESH_TOKEN: a
refresh revokes the refresh token it was given and deletes the access token
issued with it; no family revocation without REFRESH_TOKEN_REUSE_PROTECTION).
That is Passport's token policy, so PassportPolicyTests compares which tokens
work after which requests here and in authmock's passport dialect. Binds a
free loopback port and prints one JSON line: the port and the client."""
from django_fixture import alice, configure, serve

configure(
    __name__,
    ["oauth2_provider"],
    REST_FRAMEWORK={"DEFAULT_AUTHENTICATION_CLASSES": ["oauth2_provider.contrib.rest_framework.OAuth2Authentication"]},
    OAUTH2_PROVIDER={"ROTATE_REFRESH_TOKEN": True},
)

from django.urls import path  # noqa: E402
from oauth2_provider.views import TokenView  # noqa: E402
from rest_framework.decorators import api_view, permission_classes  # noqa: E402
from rest_framework.permissions import IsAuthenticated  # noqa: E402
from rest_framework.response import Response  # noqa: E402


@api_view(["GET"])
@permission_classes([IsAuthenticated])
def me(request):
    return Response({"sub": request.user.username})


urlpatterns = [
    path("oauth/token", TokenView.as_view()),
    path("api/me", me),
]

if __name__ == "__main__":
    from oauth2_provider.models import Application

    secret = "authmock-client-secret"
    Application.objects.create(
        client_id="demo", client_secret=secret, user=alice(), name="demo",
        client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type=Application.GRANT_PASSWORD,
    )
    serve({"client_id": "demo", "client_secret": secret})
