"""Test harness: real uvicorn server processes and real WebSocket clients.

``ServerProcess`` runs ``python -m app serve`` on a free port with settings from environment
variables (its own embedded store, or the real Redis with a key prefix of its own), and stops it
by its pid. ``Client`` is a scripted player: it keeps its view up to date by applying every patch
with ``jsonpatch`` and checks that versions arrive without gaps.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import jsonpatch
import orjson
import pytest
import redis
import websockets

from .zygote import ForkedProcess, Zygote

ROOT = Path(__file__).resolve().parents[2]
#: TEST_REDIS_CLUSTER=1 (tests/conftest.py starts a local cluster) or TEST_REDIS_CLUSTER_URL (a
#: node of a running one): every test of the real Redis runs on a Redis Cluster instead, its
#: servers with REDIS_CLUSTER=true and its own clients cluster clients (real_client)
CLUSTER_URL = os.environ.get("TEST_REDIS_CLUSTER_URL")
REAL_REDIS = CLUSTER_URL or os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
TIMEOUT = 10.0


def real_client() -> redis.Redis:
    """A client of the real Redis (of the cluster, with the switch on)."""
    if CLUSTER_URL:
        from redis.cluster import RedisCluster

        return RedisCluster.from_url(REAL_REDIS)  # type: ignore[return-value]
    return redis.Redis.from_url(REAL_REDIS)


def real_async_client():
    """``real_client``'s asyncio twin."""
    import redis.asyncio as aioredis

    if CLUSTER_URL:
        from redis.asyncio.cluster import RedisCluster

        return RedisCluster.from_url(REAL_REDIS)
    return aioredis.Redis.from_url(REAL_REDIS)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def real_redis_available() -> bool:
    port = int(REAL_REDIS.rsplit(":", 1)[1].split("/")[0])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class RedisServer:
    """A redis-server of the test's own (AOF on, fsync always) on a free port, killed by its pid;
    started again in the same directory it comes back with what it had."""

    def __init__(self, directory) -> None:
        self.port = free_port()
        self.dir = directory
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is needed (Debian package redis-server)"
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
             "--appendfsync", "always", "--dir", str(self.dir)], stdout=subprocess.DEVNULL)
        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 10
        while True:
            try:
                if client.ping():
                    return self
            except redis.exceptions.RedisError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


#: Environment variables the app reads when it is imported (app/core/paths.py): a server with
#: its own cannot be forked from the zygote's imports
READ_AT_IMPORT = ("MERCYLESS_HOME",)


class ServerProcess:
    def __init__(self, *, redis: str = "fake", prefix: str | None = None, module: str = "app",
                 **settings: Any) -> None:
        """``module`` is what runs with ``serve``: ``app`` (``mercyless serve``) or ``bench.serve``
        (the same with the load benchmark's echoes)."""
        self.module = module
        self.port = free_port()
        self.prefix = prefix or f"test-{uuid.uuid4().hex[:8]}"
        self.env = dict(os.environ)
        self.env.update({"KEY_PREFIX": self.prefix, "BOT_DELAY_MS": "0", "BOT_CATCH_DELAY_MS": "200000",
                         "LOG_LEVEL": "WARNING", "PYTHONPATH": str(ROOT),
                         "RATE_BURST": "500", "RATE_PER_S": "500", "FAILED_JOINS_PER_MIN": "0",
                         "SOCKETS_PER_IP": "0", "ROOMS_PER_MIN": "0", "JOINS_PER_MIN": "0"})
        # the rest of the limits, lifted too (tests/app/test_abuse.py runs with the defaults)
        self.env.update({"PING_BURST": "500", "PING_PER_S": "500", "HELLOS_PER_TOKEN_PER_MIN": "0",
                         "HELLOS_PER_IP_PER_MIN": "0", "QR_PER_MIN": "0"})
        # a database of its own, out of the work tree (a test that shares one says so)
        self.env["DATABASE_URL"] = (f"sqlite+aiosqlite:///{tempfile.gettempdir()}/"
                                    f"mercyless-test-{self.prefix}-{self.port}.sqlite3")
        if redis == "real":
            self.env["REDIS_URL"] = REAL_REDIS
            if CLUSTER_URL:
                self.env["REDIS_CLUSTER"] = "true"
        else:
            self.env.pop("REDIS_URL", None)
            # the embedded store's folder, of its own too (a test that restarts the server
            # starts the next process on the same one)
            self.env["EMBEDDED_STORE"] = f"{tempfile.gettempdir()}/mercyless-test-{self.prefix}-{self.port}"
        for key, value in settings.items():
            self.env[key.upper()] = json.dumps(value) if isinstance(value, list | dict) else str(value)
        self.proc: subprocess.Popen[bytes] | ForkedProcess | None = None
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}"

    def _read_log(self) -> str:
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def start(self) -> ServerProcess:
        return self.launch().wait_started()

    def launch(self) -> ServerProcess:
        """Start the process without waiting for it (``wait_started``): processes launched one
        after another start together."""
        # a file, not a pipe: nobody reads a pipe while the server runs, and a full pipe
        # would stop the server in the middle of a test
        self._log = tempfile.NamedTemporaryFile(prefix="mercyless-log-")  # noqa: SIM115 - kept open for the process's life
        args = [*(["serve"] if self.module == "app" else []), "--port", str(self.port)]
        # forked from the imports made once (tests/app/zygote.py), unless a setting read at
        # import differs from the zygote's
        zygote = None if any(self.env.get(k) != os.environ.get(k) for k in READ_AT_IMPORT) \
            else Zygote.shared(str(ROOT))
        if zygote is not None:
            self.proc = zygote.start(self.module, args, self.env, str(ROOT), self._log.name)
        else:
            self.proc = subprocess.Popen([sys.executable, "-m", self.module, *args], cwd=ROOT, env=self.env,
                                         stdout=subprocess.DEVNULL, stderr=self._log)
        return self

    def wait_started(self) -> ServerProcess:
        assert self.proc is not None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self._read_log()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=0.5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError("server did not start")

    def stop(self, sig: int = signal.SIGTERM) -> str:
        """Stop the process by its pid; returns what it wrote to stderr."""
        if self.proc is None:
            return ""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        err = self._read_log()
        self.proc = None
        return err

    # -- HTTP -----------------------------------------------------------------------------------

    def create(self, name: str = "Ann", rules: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name}
        if rules is not None:
            body["rules"] = rules
        r = httpx.post(f"{self.url}/api/rooms", json=body, timeout=TIMEOUT)
        assert r.status_code == 201, r.text
        return r.json()

    def join(self, code: str, name: str) -> dict[str, Any]:
        r = httpx.post(f"{self.url}/api/rooms/{code}/join", json={"name": name}, timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        return r.json()


class Client:
    """A scripted player over a real WebSocket."""

    _ids = itertools.count(1)

    def __init__(self, server: ServerProcess, code: str, token: str) -> None:
        self.server = server
        self.code = code
        self.token = token
        self.ws: Any = None
        self.you: str | None = None
        self.version = 0
        self.view: dict[str, Any] = {}
        self.events: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []  # every server message, in order
        self.answers: dict[str, dict[str, Any]] = {}
        self.gaps = 0

    async def connect(self) -> Client:
        self.ws = await websockets.connect(f"{self.server.ws_url}/ws/{self.code}", max_size=2**20)
        await self.ws.send(json.dumps({"type": "hello", "token": self.token}))
        await self.until(lambda m: m["type"] == "welcome")
        return self

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    def _absorb(self, msg: dict[str, Any]) -> None:
        self.messages.append(msg)
        kind = msg["type"]
        if kind == "welcome":
            self.you = msg["you"]
            self.version = msg["version"]
            self.view = msg["state"]
        elif kind == "patch":
            if msg["version"] != self.version + 1:
                self.gaps += 1
                raise AssertionError(f"version gap: had {self.version}, got {msg['version']}")
            # a new document for each patch (a test may hold the one before), copied by orjson:
            # jsonpatch's own deepcopy of it was the soak's largest cost
            fresh = orjson.loads(orjson.dumps(self.view))
            self.view = jsonpatch.apply_patch(fresh, msg["ops"], in_place=True)
            self.version = msg["version"]
            self.events.extend(msg["events"])
        elif kind in ("ack", "error") and msg.get("id") is not None:
            self.answers.setdefault(msg["id"], msg)

    async def recv(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        msg = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self._absorb(msg)
        return msg

    async def until(self, pred, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Read messages until one satisfies ``pred`` (state is kept up to date meanwhile)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise TimeoutError("condition not met")
            msg = await self.recv(left)
            if pred(msg):
                return msg

    async def until_view(self, pred, timeout: float = TIMEOUT) -> dict[str, Any]:
        if pred(self.view):
            return self.view
        await self.until(lambda m: pred(self.view), timeout)
        return self.view

    async def send(self, msg: dict[str, Any], *, msg_id: str | None = None) -> dict[str, Any]:
        """Send with an id and wait for its ack or error."""
        mid = msg_id or f"m{next(self._ids)}"
        await self.ws.send(json.dumps({**msg, "id": mid}))
        if mid in self.answers:
            del self.answers[mid]
        await self.until(lambda m: m["type"] in ("ack", "error") and m.get("id") == mid)
        return self.answers[mid]

    async def send_raw(self, text: str | bytes) -> None:
        await self.ws.send(text)

    @property
    def game(self) -> dict[str, Any] | None:
        return self.view.get("game")

    def my_turn(self) -> bool:
        g = self.game
        if not g or g.get("winner") is not None or self.view["room"]["status"] != "playing":
            return False
        pending = g.get("pending")
        if pending:
            return pending["player"] == self.you
        return g["turn"] == self.you

    def choose_move(self, rng) -> dict[str, Any]:
        """One move chosen from what the view says is legal (the server's own hints)."""
        legal = self.game["legal"]
        pending = self.game.get("pending")
        if legal["choose"] and pending:
            field = pending["choice"] if pending["choice"] in ("target", "top") else "color"
            return {"type": "choose", field: rng.choice(legal["choose"])}
        options: list[dict[str, Any]] = [{"type": "play", "card": c} for c in legal["play"]]
        if legal["draw"]:
            options.append({"type": "draw"})
        if legal["pass"]:
            options.append({"type": "pass"})
        move = rng.choice(options)
        if move["type"] == "play" and len(self.view["hand"]) == 2:
            move["uno"] = True
        return move

    async def play_turn(self, rng) -> dict[str, Any]:
        return await self.send(self.choose_move(rng))


def stop_signal_kill() -> int:
    return signal.SIGKILL


def failed(request: pytest.FixtureRequest) -> bool:
    """The test failed, or never ran (tests/app/conftest.py keeps each phase's report)."""
    report = getattr(request.node, "rep_call", None)
    return report is None or report.failed
