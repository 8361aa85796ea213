"""The driver side of authmock's stdio protocol (version 1), for Python drivers.

A driver supplies a client object with ``login(username, password)`` and
``request(method, path, headers, body)``, each returning an outcome dict
(``{"outcome": "ok", "status": 200, "body": "..."}``); this module reads the
runner's JSON lines, runs every request on its own thread (the runner sends
concurrent calls on purpose), answers each id exactly once, and exits after
``shutdown``.
"""
import json
import os
import sys
import threading
import traceback

_out = threading.Lock()


def _send(message):
    with _out:
        try:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            # The runner is gone (its end of the pipe closed): exit quietly, as at the end of stdin.
            _quit()


def _quit():
    """Leaves at once and without a traceback: nobody reads the answers any more."""
    try:
        sys.stdout = open(os.devnull, "w")
    finally:
        os._exit(0)


def _answer(message_id, work):
    try:
        result = work()
    except Exception as error:  # a library exception the client did not map: the app saw no answer
        traceback.print_exc(file=sys.stderr)
        result = {"outcome": "transport_error", "message": f"{type(error).__name__}: {error}"}
    _send({"id": message_id, "ok": result.get("outcome") == "ok", **result})


def serve(name, version, profiles, make_client, capabilities=("url",), renewal_margin=None):
    """Runs the protocol until shutdown. ``make_client(hello)`` builds the client.

    ``capabilities``: protocol extensions the driver implements; ``url`` hands
    a request to another host over as its full URL, ``graphql`` says the
    client reads GraphQL answers, ``oidc`` that ``login`` takes ``openid=True``
    and signs in as an OpenID Connect client (docs/driver-protocol.md). An
    outcome dict may carry ``idTokenClaims``: it goes into the answer as is.
    ``renewal_margin``: seconds before expiry the library renews a token, if
    it renews by its clock with a margin (hello's ``renewalMargin``).
    ``cancel`` (declare it, and give the client ``cancel(call)``): the app
    cancels a call in flight; ``call`` is the call's ``X-Authmock-Call``
    header, as ``request`` got it. The client stops that call the way its
    library does, and the call answers ``{"outcome": "cancelled"}``.
    ``instances`` (declare it): a request may come from another instance of
    the app's client over the same token store (its extension, a widget);
    the client's ``request`` then gets ``instance=N`` (1 is the app).
    ``logout`` (declare it, and give the client ``logout()`` returning an
    outcome dict): the app signs the user out; it runs on its own thread,
    like ``login``, while the calls in flight go on.
    """
    client, threads = None, []
    calls = {}  # request id -> the call's X-Authmock-Call, which the client knows it by
    for line in sys.stdin:
        message = json.loads(line)
        op, message_id = message.get("op"), message.get("id")
        if op == "hello":
            client = make_client(message)
            answer = {"id": message_id, "ok": True, "driver": name, "version": version, "profiles": profiles, "capabilities": list(capabilities)}
            if renewal_margin is not None:
                answer["renewalMargin"] = renewal_margin
            _send(answer)
        elif op == "shutdown":
            for thread in threads:
                thread.join(timeout=10)
            _send({"id": message_id, "ok": True})
            return
        elif op == "login":
            # The `oidc` extension: only a driver that declares it gets `openid`.
            work = lambda m=message: client.login(m["username"], m["password"], **({"openid": True} if m.get("openid") else {}))
            threads.append(threading.Thread(target=_answer, args=(message_id, work), daemon=True))
            threads[-1].start()
        elif op == "request":
            calls[message_id] = message.get("headers", {}).get("X-Authmock-Call", message_id)
            # The `instances` extension: only a driver that declares it gets `instance`.
            instance = {"instance": message.get("instance", 1)} if "instances" in capabilities else {}
            work = lambda m=message, i=instance: client.request(m["method"], m.get("url") or m["path"], m.get("headers", {}), m.get("body"), **i)
            threads.append(threading.Thread(target=_answer, args=(message_id, work), daemon=True))
            threads[-1].start()
        elif op == "logout" and "logout" in capabilities and hasattr(client, "logout"):
            threads.append(threading.Thread(target=_answer, args=(message_id, client.logout), daemon=True))
            threads[-1].start()
        elif op == "cancel" and "cancel" in capabilities and hasattr(client, "cancel"):
            # Answered at once; the cancelled call answers for itself.
            client.cancel(calls.get(message.get("call"), message.get("call")))
            _send({"id": message_id, "ok": True, "outcome": "ok"})
        else:
            _send({"id": message_id, "ok": False, "outcome": "unsupported", "message": f"unknown op {op}"})
    # stdin ended without shutdown: the runner went away; the calls still running answer no one.
    _quit()


def outcome(status, body):
    """The outcome dict for an HTTP answer that reached the application."""
    return {"outcome": "ok" if 200 <= status < 300 else "http_error", "status": status, "body": body}


def session_call(session, base, method, path, headers, body, refused):
    """One application call through a ``requests``-style session.

    ``path`` is the runner's path, or a full URL for another host; a
    ``refused`` exception (the library's "the refresh was refused") means the
    app shows its login screen: ``reauth_required``.
    """
    try:
        response = session.request(method, path if path.startswith("http") else base + path, headers=headers, data=body, timeout=30)
    except refused as error:
        return {"outcome": "reauth_required", "message": str(error)}
    return outcome(response.status_code, response.text)
