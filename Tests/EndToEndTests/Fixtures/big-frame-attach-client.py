"""An attached client whose messages are larger than a WebSocket frame of
16 KiB (a driver that reports a long body or evidence): every answer
carries 40,000 bytes of padding in `message`. It declines every call
(`unsupported`), so each case fails at its sign-in; what matters is that
the runner reads the big frames instead of dropping the connection, and
shows a shortened message.
Usage: big-frame-attach-client.py ws://HOST:PORT/attach"""
import importlib.util, os, sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("flaky", os.path.join(here, "flaky-attach-client.py"))
# Reuse the bare RFC 6455 client without running its main loop.
source = open(spec.origin).read().split("\nurl = sys.argv[1]")[0]
client = {}
exec(compile(source, spec.origin, "exec"), client)

padding = "x" * 40_000
sock = client["connect"](sys.argv[1])
while True:
    message = client["receive"](sock)
    if isinstance(message, tuple):
        break
    message = client["json"].loads(message)
    if message["op"] == "hello":
        client["send"](sock, {"id": message["id"], "ok": True, "driver": "big-frames", "version": "1", "profiles": ["oauth2"],
                              "capabilities": [], "message": padding})
    elif message["op"] == "shutdown":
        client["send"](sock, {"id": message["id"], "ok": True})
    else:
        client["send"](sock, {"id": message["id"], "ok": False, "outcome": "unsupported", "message": "declined: " + padding})
