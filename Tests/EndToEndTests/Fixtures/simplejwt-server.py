"""A real djangorestframework-simplejwt server, configured as its docs show
(TokenObtainPairView, TokenRefreshView, JWTAuthentication, rotation with
blacklist after rotation), for SimpleJWTFidelityTests to compare authmock's
simplejwt dialect with. Binds a free loopback port and prints one JSON line:
the port, and an access and a refresh token the library itself made
already expired (the real server's clock cannot be moved)."""
import datetime, json, os, sys, tempfile

import django
from django.conf import settings

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=["*"],
    SECRET_KEY="authmock-fidelity-check-" + os.urandom(16).hex(),
    ROOT_URLCONF=__name__,
    INSTALLED_APPS=[
        "django.contrib.auth",
        "django.contrib.contenttypes",
        "rest_framework",
        "rest_framework_simplejwt.token_blacklist",
    ],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(tempfile.mkdtemp(), "db.sqlite3")}},
    REST_FRAMEWORK={"DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework_simplejwt.authentication.JWTAuthentication"]},
    SIMPLE_JWT={"ROTATE_REFRESH_TOKENS": True, "BLACKLIST_AFTER_ROTATION": True},
    USE_TZ=True,
)
django.setup()

from django.urls import path  # noqa: E402
from rest_framework.decorators import api_view, permission_classes  # noqa: E402
from rest_framework.permissions import IsAuthenticated  # noqa: E402
from rest_framework.response import Response  # noqa: E402
from rest_framework_simplejwt.views import TokenObtainPairView, TokenRefreshView  # noqa: E402


@api_view(["GET"])
@permission_classes([IsAuthenticated])
def me(request):
    return Response({"sub": request.user.username})


urlpatterns = [
    path("api/token/", TokenObtainPairView.as_view()),
    path("api/token/refresh/", TokenRefreshView.as_view()),
    path("api/me", me),
]

if __name__ == "__main__":
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application
    from rest_framework_simplejwt.tokens import AccessToken, RefreshToken

    call_command("migrate", verbosity=0)
    user = User.objects.create_user("alice", password="wonderland")
    expired = {}
    for name, kind in (("expired_access", AccessToken), ("expired_refresh", RefreshToken)):
        token = kind.for_user(user)
        token.set_exp(lifetime=datetime.timedelta(seconds=-60))
        expired[name] = str(token)

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = make_server("127.0.0.1", 0, get_wsgi_application(), handler_class=Quiet)
    print(json.dumps({"port": server.server_port, **expired}), flush=True)
    server.serve_forever()
