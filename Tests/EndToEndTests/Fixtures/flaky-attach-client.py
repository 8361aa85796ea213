"""An attached client that drops its connection in the middle of the first
case, then comes back and answers every later call `unsupported`: the
runner must report the first case ERROR and run the next one on the new
connection. A bare RFC 6455 client (the standard library has none).
Usage: flaky-attach-client.py ws://HOST:PORT/attach"""
import base64, json, os, socket, struct, sys, urllib.parse


def connect(url):
    parts = urllib.parse.urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=60)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nUser-Agent: flaky-attach-client\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            raise SystemExit("the runner closed the handshake")
        head += chunk
    if b" 101 " not in head.split(b"\r\n")[0]:
        raise SystemExit(f"no upgrade: {head!r}")
    return sock


def read_exactly(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def receive(sock):
    """The next text message, or (close code,) when the runner closes."""
    head = read_exactly(sock, 2)
    if head is None:
        return (None,)
    opcode, length = head[0] & 0x0F, head[1] & 0x7F
    if length == 126:
        length = struct.unpack("!H", read_exactly(sock, 2))[0]
    elif length == 127:
        length = struct.unpack("!Q", read_exactly(sock, 8))[0]
    payload = read_exactly(sock, length) or b""
    if opcode == 8:
        return (struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None,)
    return payload.decode()


def send(sock, message):
    payload = json.dumps(message).encode()
    mask = os.urandom(4)
    header = bytes([0x81])
    if len(payload) < 126:
        header += bytes([0x80 | len(payload)])
    else:
        header += bytes([0x80 | 126]) + struct.pack("!H", len(payload))
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def serve(url, drop_on_request):
    sock = connect(url)
    while True:
        message = receive(sock)
        if isinstance(message, tuple):
            return message[0]
        message = json.loads(message)
        if message["op"] == "hello":
            send(sock, {"id": message["id"], "ok": True, "driver": "flaky", "version": "1", "profiles": ["oauth2"], "capabilities": []})
        elif message["op"] == "shutdown":
            send(sock, {"id": message["id"], "ok": True})
        elif drop_on_request:
            sock.close()  # mid-case: the call is never answered
            return "dropped"
        else:
            send(sock, {"id": message["id"], "ok": False, "outcome": "unsupported", "message": "this client only tests reconnection"})


url = sys.argv[1]
first = True
while True:
    ended = serve(url, drop_on_request=first)
    first = False
    if ended == 1000:
        break
