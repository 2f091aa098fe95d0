"""What tests/web/test_app_shell.py uses: scripts that stand in for a browser's parts in the page
(visibility, the wake lock, notifications, an install offer) or record what the page does, and a
spectator over a plain WebSocket that knows the room's version as the server has it."""

from __future__ import annotations

import json
import re
import struct
import time

import httpx
import jsonpatch
from websockets.sync.client import connect

from tests.app.harness import ServerProcess

# every card plays on any other: no wild's colour, no choice to wait for
ALL_FIVES = {"r-5": 10, "y-5": 10, "g-5": 10, "b-5": 10}

HIDE_AT_WILL = """
(() => {
  let hidden = false;
  Object.defineProperty(Document.prototype, 'visibilityState',
    {configurable: true, get: () => hidden ? 'hidden' : 'visible'});
  Object.defineProperty(Document.prototype, 'hidden', {configurable: true, get: () => hidden});
  window.__setHidden = (h) => { hidden = h; document.dispatchEvent(new Event('visibilitychange')); };
})();
"""

# a wake lock that records what the page asks (headless Chromium refuses a real one)
FAKE_WAKE_LOCK = """
(() => {
  window.__wake = [];
  const wakeLock = {request: async (type) => {
    const listeners = [];
    const sentinel = {type, released: false,
      addEventListener: (kind, f) => { if (kind === 'release') listeners.push(f); },
      release: async () => {
        if (sentinel.released) return;
        sentinel.released = true;
        window.__wake.push('release');
        listeners.forEach((f) => f(new Event('release')));
      }};
    window.__wake.push('request');
    return sentinel;
  }};
  Object.defineProperty(Navigator.prototype, 'wakeLock', {configurable: true, get: () => wakeLock});
  const count = (what) => window.__wake.filter((w) => w === what).length;
  window.__held = () => count('request') - count('release');
})();
"""

RECORD_VIDEO = """
window.__video = [];
for (const name of ['play', 'pause']) {
  const original = HTMLMediaElement.prototype[name];
  HTMLMediaElement.prototype[name] = function () {
    window.__video.push(name);
    return original.call(this);
  };
}
"""

# the notifications the page shows, by the worker or by itself (none reaches the desktop)
CAPTURE_NOTIFICATIONS = """
(() => {
  window.__notes = [];
  ServiceWorkerRegistration.prototype.showNotification = function (title, options) {
    window.__notes.push({via: 'worker', title, tag: options && options.tag,
                         url: options && options.data && options.data.url});
    return Promise.resolve();
  };
  const Real = window.Notification;
  function Captured(title, options) {
    window.__notes.push({via: 'page', title, tag: options && options.tag});
    this.close = () => {};
  }
  Object.defineProperty(Captured, 'permission', {get: () => Real.permission});
  Captured.requestPermission = (...args) => Real.requestPermission(...args);
  window.Notification = Captured;
})();
"""

# when each version reached the page, and when the page was unfrozen (its own clock)
RECORD_VERSIONS = """
window.__versions = [];
window.__resumed = [];
window.__sockets = [];
new MutationObserver(() => window.__versions.push([performance.now(), Number(document.body.dataset.version)]))
  .observe(document, {attributes: true, subtree: true, attributeFilter: ['data-version']});
// whether a socket was opened while the page handled its resume or a socket's close (the task of
// that event), or later (a timer: the reconnect backoff)
let inEvent = false;
const mark = () => { inEvent = true; setTimeout(() => { inEvent = false; }, 0); };
document.addEventListener('resume', () => { window.__resumed.push(performance.now()); mark(); }, true);
const Native = window.WebSocket;
window.WebSocket = class extends Native {
  constructor(...args) {
    super(...args);
    window.__sockets.push({at: performance.now(), atOnce: inEvent});
    this.addEventListener('close', mark);
  }
};
"""

CACHES_JS = "async () => (await caches.keys()).filter((k) => k.startsWith('mercyless-shell-'))"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


def shell_list(sw_text: str) -> list[str]:
    """The shell's URLs as the server wrote them into the worker."""
    return json.loads(re.search(r"const SHELL = (\[.*?\]);", sw_text).group(1))


def served_version(server: ServerProcess) -> str:
    return httpx.get(f"{server.url}/sw.js").headers["x-shell-version"]


def next_version(server: ServerProcess, old: str) -> str:
    """The version the server serves once it has seen a file change (it looks once a second)."""
    deadline = time.monotonic() + 10
    while (version := served_version(server)) == old:
        assert time.monotonic() < deadline, "the served version did not change"
        time.sleep(0.1)
    return version


def wait_for_caches(page, names: list[str], timeout_ms: int = 15_000) -> None:
    """Until the page's shell caches are exactly ``names`` (the worker's install and activation)."""
    got = page.evaluate("""async ([names, timeout]) => {
      const until = performance.now() + timeout;
      for (;;) {
        const now = (await caches.keys()).filter((k) => k.startsWith('mercyless-shell-'));
        if (JSON.stringify(now) === JSON.stringify(names) || performance.now() > until) return now;
        await new Promise((r) => setTimeout(r, 50));
      }
    }""", [names, timeout_ms])
    assert got == names


# -- a server of this module's own, on a copy of web/ it can change, and a Chromium that freezes --

INSTALL_OFFER = """() => {
  const offer = new Event('beforeinstallprompt', {cancelable: true});
  offer.prompt = async () => { window.__prompted = (window.__prompted || 0) + 1; };
  offer.userChoice = Promise.resolve({outcome: 'accepted', platform: 'web'});
  window.dispatchEvent(offer);
  return offer.defaultPrevented;
}"""


def cut_static_files(cut: list[str]):
    """A route handler under which only /api/ and /ws/ reach the server: every other request (a
    static file) is aborted as if offline, and its path noted in ``cut``."""
    def static_cut(route) -> None:
        path = re.sub(r"^https?://[^/]+", "", route.request.url)
        if path.startswith(("/api/", "/ws/")):
            route.fallback()
        else:
            cut.append(path)
            route.abort("internetdisconnected")
    return static_cut


def watch_errors(page, errors: list[str]) -> None:
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))


class Watcher:
    """A spectator over a plain WebSocket: the room's version and view as the server has them."""

    def __init__(self, server: ServerProcess, code: str) -> None:
        token = httpx.post(f"{server.url}/api/rooms/{code}/watch", json={"name": "TV"}).json()["token"]
        self.conn = connect(f"{server.ws_url}/ws/{code}")
        self.ws = self.conn.__enter__()
        self.ws.send(json.dumps({"type": "hello", "token": token}))
        self.version, self.view, self.events = 0, {}, []
        self.until(lambda: self.version > 0)

    def until(self, done, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            try:
                msg = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            except TimeoutError:
                # what a failure needs: where the room stood when the wait gave up
                g = self.view.get("game") or {}
                raise TimeoutError(f"nothing after {timeout} s: version {self.version}, status "
                                   f"{(self.view.get('room') or {}).get('status')}, turn {g.get('turn')}, "
                                   f"pending {g.get('pending')}, players {self.view.get('players')}, "
                                   f"last events {self.events[-6:]}") from None
            if msg["type"] == "welcome":
                self.version, self.view = msg["version"], msg["state"]
            elif msg["type"] == "patch" and msg["version"] == self.version + 1:
                self.view = jsonpatch.apply_patch(self.view, msg["ops"])
                self.version = msg["version"]
                self.events.extend(msg.get("events") or [])

    def waits_for(self, player: str) -> bool:
        g = self.view.get("game") or {}
        waiting_for = (g.get("pending") or {}).get("player", g.get("turn"))
        return self.view["room"]["status"] == "playing" and waiting_for == player

    def close(self) -> None:
        self.conn.__exit__(None, None, None)


def first_at(versions: list, target: int, since: float) -> float:
    """How long after ``since`` (the page's clock) the page first showed version ``target`` or later."""
    return min(at for at, version in versions if version >= target and at >= since) - since
