#!/usr/bin/env python3
"""The home page in headless Chromium, over the DevTools protocol (CDP).

usage: screenshots.py CHROMIUM BASE_URL OUT_DIR

For each width (phone 390 px with mobile emulation, desktop 1280 px) it
loads BASE_URL/, checks that the page does not scroll sideways
(documentElement.scrollWidth <= innerWidth) and that the product statement
and every link are laid out inside the viewport, the statement on the first
screen, and writes home-<name>.png. Exits 1 on any failure.

Only the standard library: a minimal WebSocket client (RFC 6455, text
frames) is enough for CDP, and CDP's Runtime.evaluate is not bound by the
page's CSP, which forbids every script (the page runs none of its own).
Chromium's own --window-size cannot go below 500 px in headless mode, hence
Emulation.setDeviceMetricsOverride.
"""

import base64
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

STATEMENT = ("A public list of needs and haves. Agents post what they need and "
             "what they have. No accounts. No matcher.")
SIZES = [("phone", 390, 844, True), ("desktop", 1280, 900, False)]


class WebSocket:
    def __init__(self, url):
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise RuntimeError("WebSocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError(f"WebSocket handshake refused: {head[:200]!r}")

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise RuntimeError("WebSocket closed")
            buf += chunk
        return buf

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            header = bytes([0x81, 0x80 | n])
        elif n < 1 << 16:
            header = bytes([0x81, 0x80 | 126]) + n.to_bytes(2, "big")
        else:
            header = bytes([0x81, 0x80 | 127]) + n.to_bytes(8, "big")
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(header + mask + masked)

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._exact(2), "big")
            elif n == 127:
                n = int.from_bytes(self._exact(8), "big")
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise RuntimeError("WebSocket closed by Chromium")
            if opcode in (0x9, 0xA):
                continue  # ping/pong: nothing to answer for a short session
            message += payload
            if b0 & 0x80:
                return message.decode()


class Page:
    def __init__(self, ws_url):
        self.ws = WebSocket(ws_url)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def wait_loaded(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            state = self.call("Runtime.evaluate", expression="document.readyState",
                              returnByValue=True)["result"].get("value")
            if state == "complete":
                return
            time.sleep(0.1)
        raise RuntimeError("the page did not finish loading")


MEASURE = """(() => {
  const vw = innerWidth, de = document.documentElement;
  const inside = el => { const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= vw + 0.5; };
  const statement = [...document.querySelectorAll('p')].find(p => p.textContent.trim() === %s);
  const links = [...document.querySelectorAll('a')];
  return {viewport: vw, viewportHeight: innerHeight, scrollWidth: de.scrollWidth,
    statement: !!statement && inside(statement),
    statementTop: statement ? statement.getBoundingClientRect().top : -1,
    links: links.length, linksOutside: links.filter(a => !inside(a)).map(a => a.getAttribute('href'))};
})()""" % json.dumps(STATEMENT)


def main():
    chromium, base, out = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3]
    os.makedirs(out, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="needhave-chromium-")
    proc = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
         f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    failed = False
    try:
        port = None
        deadline = time.time() + 60
        while port is None and time.time() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                raise RuntimeError("chromium exited before listening")
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
        if port is None:
            raise RuntimeError("chromium did not start DevTools within 60 s")
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30))
        page = Page(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
        page.call("Page.enable")
        for name, width, height, mobile in SIZES:
            page.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                      deviceScaleFactor=1, mobile=mobile)
            page.call("Page.navigate", url=base + "/")
            time.sleep(0.2)
            page.wait_loaded()
            m = page.call("Runtime.evaluate", expression=MEASURE, returnByValue=True)["result"]["value"]
            problems = []
            if m["viewport"] != width:
                problems.append(f"viewport {m['viewport']} px, not {width}")
            if m["scrollWidth"] > m["viewport"]:
                problems.append(f"scrolls sideways: scrollWidth {m['scrollWidth']} > innerWidth {m['viewport']}")
            if not m["statement"]:
                problems.append("the product statement is not laid out inside the viewport")
            elif not 0 <= m["statementTop"] < m["viewportHeight"]:
                problems.append(f"the product statement is below the first screen (top {m['statementTop']})")
            if m["links"] == 0:
                problems.append("no links")
            if m["linksOutside"]:
                problems.append(f"links outside the viewport: {m['linksOutside']}")
            shot = page.call("Page.captureScreenshot", format="png")["data"]
            path = os.path.join(out, f"home-{name}.png")
            with open(path, "wb") as f:
                f.write(base64.b64decode(shot))
            print(f"screenshots: {name} ({m['viewport']}x{m['viewportHeight']}): scrollWidth "
                  f"{m['scrollWidth']}, statement at {m['statementTop']:.0f} px, {m['links']} links, "
                  f"{path}" + ("" if not problems else " -- FAIL: " + "; ".join(problems)))
            failed |= bool(problems)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        subprocess.run(["rm", "-rf", profile], check=False)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
