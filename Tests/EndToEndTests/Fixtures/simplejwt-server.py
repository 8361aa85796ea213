"""A real djangorestframework-simplejwt server, configured as its docs show
(TokenObtainPairView, TokenRefreshView, TokenBlacklistView, JWTAuthentication,
rotation with blacklist after rotation), for scripts/fidelity.py and
SimpleJWTFidelityTests to compare authmock's simplejwt dialect with. Binds a free loopback port and prints one JSON line:
the port, and an access and a refresh token the library itself made
already expired (the real server's clock cannot be moved)."""
import datetime
import hashlib

from django_fixture import alice, configure, serve

configure(
    __name__,
    ["rest_framework_simplejwt.token_blacklist"],
    REST_FRAMEWORK={"DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework_simplejwt.authentication.JWTAuthentication"]},
    SIMPLE_JWT={"ROTATE_REFRESH_TOKENS": True, "BLACKLIST_AFTER_ROTATION": True},
)

from django.urls import path  # noqa: E402
from rest_framework.decorators import api_view, permission_classes  # noqa: E402
from rest_framework.permissions import IsAuthenticated  # noqa: E402
from rest_framework.response import Response  # noqa: E402
from rest_framework_simplejwt.views import TokenBlacklistView, TokenObtainPairView, TokenRefreshView  # noqa: E402


@api_view(["GET"])
@permission_classes([IsAuthenticated])
def me(request):
    return Response({"sub": request.user.username})


@api_view(["POST"])
@permission_classes([IsAuthenticated])
def uploads(request):
    # What arrived, for ProxyTests: an upload larger than --max-body goes through the proxy whole.
    return Response({"bytes": len(request.body), "sha256": hashlib.sha256(request.body).hexdigest()})


urlpatterns = [
    path("api/token/", TokenObtainPairView.as_view()),
    path("api/token/refresh/", TokenRefreshView.as_view()),
    path("api/token/blacklist/", TokenBlacklistView.as_view()),
    path("api/me", me),
    path("api/uploads", uploads),
]

if __name__ == "__main__":
    from rest_framework_simplejwt.tokens import AccessToken, RefreshToken

    user = alice()
    expired = {}
    for name, kind in (("expired_access", AccessToken), ("expired_refresh", RefreshToken)):
        token = kind.for_user(user)
        token.set_exp(lifetime=datetime.timedelta(seconds=-60))
        expired[name] = str(token)
    serve(expired)
