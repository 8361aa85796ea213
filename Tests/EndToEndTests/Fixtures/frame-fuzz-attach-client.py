"""An attached client that first attacks the runner's WebSocket transport,
one connection per hostile frame, each sent as its answer to the runner's
`hello`: every payload size around the framing boundaries (0, 125, 126,
65535, 65536, 16 KiB, the 4 MiB limit and one past it) of random bytes as
text (not UTF-8, not JSON), JSON that is no answer, binary, unmasked,
fragmented, oversized control frames, reserved opcodes and bits, an
impossible length, a frame cut short. After each it notes whether the
runner closed the connection (with its close code) or kept it open for
10 s. Then it attaches properly and declines every call, so the run ends.
It prints one line per frame to stderr ("frame NAME: closed|close
CODE|open") for the test to read.
Usage: frame-fuzz-attach-client.py ws://HOST:PORT/attach SEED"""
import importlib.util, os, random, socket, struct, sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("flaky", os.path.join(here, "flaky-attach-client.py"))
source = open(spec.origin).read().split("\nurl = sys.argv[1]")[0]
client = {}
exec(compile(source, spec.origin, "exec"), client)

url, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)


def frame(opcode, payload, fin=True, masked=True, rsv=0):
    header = bytes([(0x80 if fin else 0) | rsv | opcode])
    mask_bit = 0x80 if masked else 0
    if len(payload) < 126:
        header += bytes([mask_bit | len(payload)])
    elif len(payload) < 65536:
        header += bytes([mask_bit | 126]) + struct.pack("!H", len(payload))
    else:
        header += bytes([mask_bit | 127]) + struct.pack("!Q", len(payload))
    if not masked:
        return header + payload
    mask = os.urandom(4)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def noise(size):
    return bytes(rng.getrandbits(8) for _ in range(size)) if size < 70_000 else os.urandom(size)


hostile = []
for size in [0, 1, 125, 126, 127, 65535, 65536, 16384, 16385, 1 << 20, (4 << 20) - 64, (4 << 20) + 1]:
    hostile.append((f"text-{size}", frame(0x1, noise(size))))
hostile += [
    ("json-not-an-answer", frame(0x1, b'{"id": "nope", "ok": "maybe", "outcome": 7}')),
    ("json-array", frame(0x1, b"[1, 2, 3]")),
    ("binary", frame(0x2, noise(300))),
    ("unmasked", frame(0x1, b'{"ok": true}', masked=False)),
    ("fragmented", frame(0x1, b'{"id": 1,', fin=False) + frame(0x0, b' "ok": true}')),
    ("continuation-first", frame(0x0, b"{}")),
    ("ping-200", frame(0x9, noise(200))),
    ("reserved-opcode", frame(0x3, b"x")),
    ("rsv-bits", frame(0x1, b"{}", rsv=0x70)),
    ("cut-short", frame(0x1, noise(1000))[:500]),
    ("length-2^63", bytes([0x81, 0xFF]) + struct.pack("!Q", 1 << 63) + os.urandom(4)),
]


def outcome(sock):
    """What the runner did within 10 s of the frame."""
    sock.settimeout(10)
    try:
        while True:
            message = client["receive"](sock)
            if isinstance(message, tuple):
                return "closed" if message[0] is None else f"close {message[0]}"
    except socket.timeout:
        return "open"
    except OSError:
        return "closed"


for name, data in hostile:
    sock = client["connect"](url)
    first = client["receive"](sock)  # the runner's hello
    if isinstance(first, tuple):
        print(f"frame {name}: closed before hello", file=sys.stderr, flush=True)
        continue
    try:
        sock.sendall(data)
    except OSError:
        pass
    print(f"frame {name}: {outcome(sock)}", file=sys.stderr, flush=True)
    sock.close()

# Now a client that behaves: the run must still end with a verdict for every case.
print("attached properly:", client["serve"](url, False), file=sys.stderr, flush=True)
