"""A page in headless Chromium (Debian's `chromium`), driven line by line
over the DevTools protocol, for tests that click: ConsoleTests opens
authmock's console with it and presses its buttons as a person would (a
mouse press and release where the button is drawn).

    python3 browser.py CHROMIUM URL

reads one JSON command per line on stdin and answers each with one JSON
line, {"ok": true, "value": ...} or {"ok": false, "error": ...}:

    {"wait": "JS expression", "timeout": 10}   until it is truthy
    {"click": "CSS selector"}                   a mouse click on the element
    {"eval": "JS expression"}                   its value
    {"screenshot": "PATH"}                      the page as a PNG file
    {"quit": true}
Its first line says the page has loaded: {"ok": true, "value": "loaded"}.
"""
import base64
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket  # websocket-client, from PyPI (scripts/test.sh installs it)


class Page:
    def __init__(self, chromium, url):
        self.profile = tempfile.mkdtemp(prefix="authmock-cdp-")
        self.process = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={self.profile}",
             "--remote-debugging-port=0", "--window-size=1400,1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.time() + 30
        while port is None and time.time() < deadline:
            line = self.process.stderr.readline()
            if not line:
                break
            match = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if match:
                port = int(match.group(1))
        if port is None:
            raise RuntimeError("chromium did not start its DevTools endpoint")
        request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?{url}", method="PUT")
        target = json.loads(urllib.request.urlopen(request, timeout=10).read())
        self.socket = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0

    def send(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait(self, expression, timeout):
        """Until `expression` is truthy; one that throws (the page still
        loading, an element not there yet) counts as false."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                if self.evaluate(expression):
                    return True
            except RuntimeError as error:
                last = error
            time.sleep(0.1)
        raise RuntimeError(f"still false after {timeout} s: {expression}" + (f" (last: {last})" if last else ""))

    def click(self, selector):
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null; e.scrollIntoView(); "
            "const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        if box is None:
            raise RuntimeError(f"no element {selector}")
        x, y = box
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        return [x, y]

    def close(self):
        try:
            self.socket.close()
        finally:
            self.process.kill()
            self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)


def main():
    chromium, url = sys.argv[1], sys.argv[2]
    page = Page(chromium, url)
    try:
        page.wait("location.href !== 'about:blank' && document.readyState === 'complete'", 30)
        print(json.dumps({"ok": True, "value": "loaded"}), flush=True)
        for line in sys.stdin:
            command = json.loads(line)
            try:
                if "quit" in command:
                    print(json.dumps({"ok": True, "value": None}), flush=True)
                    break
                if "wait" in command:
                    value = page.wait(command["wait"], command.get("timeout", 10))
                elif "click" in command:
                    value = page.click(command["click"])
                elif "screenshot" in command:
                    shot = page.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
                    with open(command["screenshot"], "wb") as file:
                        file.write(base64.b64decode(shot["data"]))
                    value = command["screenshot"]
                else:
                    value = page.evaluate(command["eval"])
                print(json.dumps({"ok": True, "value": value}), flush=True)
            except Exception as error:  # the test reads what went wrong
                print(json.dumps({"ok": False, "error": str(error)}), flush=True)
    finally:
        page.close()


if __name__ == "__main__":
    sys.exit(main())
