"""A real django-oauth-toolkit server: a token endpoint with the password
grant at /oauth/token (Laravel Passport's path) and an API behind DRF's
OAuth2Authentication, with DOT's default rotation (ROTATE_REFRESH_TOKEN: a
refresh revokes the refresh token it was given and deletes the access token
issued with it; no family revocation without REFRESH_TOKEN_REUSE_PROTECTION).
That is Passport's token policy, so PassportPolicyTests compares which tokens
work after which requests here and in authmock's passport dialect. Binds a
free loopback port and prints one JSON line: the port and the client."""
import json, os, tempfile

import django
from django.conf import settings

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=["*"],
    SECRET_KEY="authmock-policy-check-" + os.urandom(16).hex(),
    ROOT_URLCONF=__name__,
    INSTALLED_APPS=[
        "django.contrib.auth",
        "django.contrib.contenttypes",
        "rest_framework",
        "oauth2_provider",
    ],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(tempfile.mkdtemp(), "db.sqlite3")}},
    REST_FRAMEWORK={"DEFAULT_AUTHENTICATION_CLASSES": ["oauth2_provider.contrib.rest_framework.OAuth2Authentication"]},
    OAUTH2_PROVIDER={"ROTATE_REFRESH_TOKEN": True},
    USE_TZ=True,
)
django.setup()

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
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application
    from oauth2_provider.models import Application

    call_command("migrate", verbosity=0)
    user = User.objects.create_user("alice", password="wonderland")
    secret = "authmock-client-secret"
    Application.objects.create(
        client_id="demo", client_secret=secret, user=user, name="demo",
        client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type=Application.GRANT_PASSWORD,
    )

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = make_server("127.0.0.1", 0, get_wsgi_application(), handler_class=Quiet)
    print(json.dumps({"port": server.server_port, "client_id": "demo", "client_secret": secret}), flush=True)
    server.serve_forever()
