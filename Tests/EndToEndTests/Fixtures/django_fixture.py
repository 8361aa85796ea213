"""What the real Django servers the fidelity tests start share: settings for
a throwaway server, the user alice, and a quiet threaded WSGI server on a free
loopback port that prints its first line (the port and what the test needs).

`--query-latency-ms N` makes every database query take N ms more, as a
database a network away does: the vendor's code is unchanged, but a window
it leaves open between two queries (a check, then a write) is then wide
enough that two requests sent together meet inside it on a loaded machine
too, where threads started milliseconds apart otherwise run one after the other."""
import argparse
import json
import os
import sys
import tempfile
import threading
import time

import django
from django.conf import settings


def configure(module, apps, **more):
    """Django settings for `module` (its urlpatterns) with `apps` installed, then django.setup()."""
    settings.configure(
        DEBUG=False,
        ALLOWED_HOSTS=["*"],
        SECRET_KEY="authmock-fidelity-check-" + os.urandom(16).hex(),
        ROOT_URLCONF=module,
        INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes", "rest_framework", *apps],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(tempfile.mkdtemp(), "db.sqlite3")}},
        USE_TZ=True,
        **more,
    )
    django.setup()


def alice():
    """The database made, and the user every test signs in as."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return User.objects.create_user("alice", password="wonderland")


def serve(started):
    """Serves until killed, after printing `started` with the port added."""
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from django.core.wsgi import get_wsgi_application

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    # A thread per request, as production servers (gunicorn's threads, uWSGI) run Django:
    # two requests at once meet inside the view, where the vendor's own locking (or
    # the lack of it) decides what each gets.
    class Threading(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    options = argparse.ArgumentParser()
    options.add_argument("--query-latency-ms", type=float, default=0)
    latency = options.parse_known_args()[0].query_latency_ms / 1000  # a fixture reads its own flags too
    application = get_wsgi_application()
    if latency > 0:
        from django.db import connection

        def slow(execute, sql, params, many, context):
            time.sleep(latency)  # releases the GIL, as a wait on a socket does
            return execute(sql, params, many, context)

        def wsgi(environ, start_response, app=application):
            # The connection is the request thread's own; Django reads the whole
            # view inside the call, so every query of the request is wrapped.
            with connection.execute_wrapper(slow):
                return app(environ, start_response)

        application = wsgi
    server = make_server("127.0.0.1", 0, application, server_class=Threading, handler_class=Quiet)
    print(json.dumps({"port": server.server_port, **started}), flush=True)
    # The test holds our stdin: when it closes (the test stopped us, or died), so do we.
    # A signal alone did not reach this process through the interpreter's launcher.
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    server.serve_forever()
