#!/usr/bin/env python3
"""Checks driver protocol messages against docs/driver-protocol.schema.json
with an independent validator (jsonschema, PyPI), as a driver's author can:

  protocol-check.py examples PAGE.md...   every message a page shows
  protocol-check.py lines                 one message per stdin line

A message with an `op` is checked as that runner message; an answer as the
answer to hello when it says what the driver is (driver, version, profiles,
capabilities, renewalMargin), else as the answer to any other message.
Prints each message that does not validate and why; exit status 1 if any
does not, 2 if a page shows none."""
import json
import os
import re
import sys

import jsonschema

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
HELLO_MEMBERS = {"driver", "version", "profiles", "capabilities", "renewalMargin"}


def definition(message):
    if "op" in message:
        return message["op"]
    return "helloAnswer" if HELLO_MEMBERS & set(message) else "answer"


def examples(path):
    """Every JSON object starting `{"id"` in the page: in indented code
    blocks (an example may run over several lines) and in inline code."""
    text = open(path, encoding="utf-8").read()
    found = []
    decoder = json.JSONDecoder()
    # Inline code: `{"id":...}`.
    for match in re.finditer(r"`(\{\"id\".*?\})`", text):
        found.append((match.group(1), path))
    # Indented code blocks: the lines joined, each object decoded where it starts.
    block = []
    for line in text.split("\n") + [""]:
        if line.startswith("    "):
            block.append(line.strip())
            continue
        joined = " ".join(block)
        block = []
        start = joined.find('{"id"')
        while start >= 0:
            try:
                _, end = decoder.raw_decode(joined, start)
            except json.JSONDecodeError as error:
                found.append((joined[start:start + 120], f"{path}: not JSON ({error.msg})"))
                break
            found.append((joined[start:end], path))
            start = joined.find('{"id"', end)
    return found


def main():
    schema = json.load(open(os.path.join(ROOT, "docs/driver-protocol.schema.json"), encoding="utf-8"))
    if len(sys.argv) >= 2 and sys.argv[1] == "examples":
        messages = [item for page in sys.argv[2:] for item in examples(page)]
        if not messages:
            print("no examples found", file=sys.stderr)
            return 2
    elif len(sys.argv) == 2 and sys.argv[1] == "lines":
        messages = [(line.strip(), "stdin") for line in sys.stdin if line.strip()]
    else:
        print(__doc__, file=sys.stderr)
        return 2
    bad = 0
    for text, origin in messages:
        try:
            message = json.loads(text)
        except json.JSONDecodeError as error:
            bad += 1
            print(f"{origin}: not JSON ({error.msg}): {text[:200]}")
            continue
        name = definition(message) if isinstance(message, dict) else "answer"
        if name not in schema["$defs"]:
            bad += 1
            print(f"{origin}: no message '{name}' in the protocol: {text[:200]}")
            continue
        check = {"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]}
        try:
            jsonschema.validate(message, check, cls=jsonschema.Draft202012Validator)
        except jsonschema.ValidationError as error:
            bad += 1
            print(f"{origin}: {name}: {error.message}: {text[:200]}")
    print(f"{len(messages) - bad} of {len(messages)} messages valid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
