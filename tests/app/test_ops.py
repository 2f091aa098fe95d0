"""Operations: the Redis key layout a cluster needs, models and migrations in step, metrics."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from .harness import Client, ServerProcess, real_client, real_redis_available

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


async def test_every_key_of_a_room_shares_its_cluster_hash_tag():
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    server = ServerProcess(redis="real").start()
    try:
        host = server.create("Ann")
        code = host["code"]
        ann = await Client(server, code, host["token"]).connect()
        await ann.send({"type": "add_bot", "level": "easy"})
        await ann.send({"type": "start"})
        await ann.send({"type": "react", "reaction": "gg"})
        r = real_client()
        keys = sorted(k.decode() for k in r.scan_iter(match=f"{server.prefix}:*"))
        room_keys = [k for k in keys if "{" in k]
        assert room_keys and all(re.fullmatch(rf"{re.escape(server.prefix)}:\{{{code}\}}:\w+", k)
                                 for k in room_keys), keys
        # the only keys without a room's tag are the indexes (each used one command at a time):
        # deadlines, the history writer's, the live processes and the rooms each one holds, the
        # rooms created lately (the bound on rooms held)
        others = set(keys) - set(room_keys)
        node_rooms = {k for k in others if re.fullmatch(rf"{re.escape(server.prefix)}:node:\w+:rooms", k)}
        assert len(node_rooms) == 1 and r.smembers(next(iter(node_rooms))) == {code.encode()}
        assert r.pttl(next(iter(node_rooms))) > 0
        assert others - node_rooms <= {f"{server.prefix}:deadlines", f"{server.prefix}:history",
                                       f"{server.prefix}:history:lease",
                                       f"{server.prefix}:nodes", f"{server.prefix}:rooms:opened"}
        assert r.pttl(f"{server.prefix}:rooms:opened") > 0
        # every room key expires
        assert all(r.pttl(k) > 0 for k in room_keys)
        await ann.close()
    finally:
        err = server.stop()
    assert "Traceback" not in err


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_models_and_migrations_agree(kind, tmp_path):
    if kind == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'check.sqlite3'}"
    else:
        name = f"mercyless_{uuid.uuid4().hex[:10]}"
        subprocess.run(["psql", "-h", "127.0.0.1", "-d", "test", "-q", "-c", f"CREATE DATABASE {name}"],
                       check=True, capture_output=True)
        url = f"postgresql+asyncpg://root@127.0.0.1:5432/{name}"
    env = {"DATABASE_URL": url, "PATH": str(BIN), "PYTHONPATH": str(ROOT)}
    try:
        for args in (["upgrade", "head"], ["check"]):
            result = subprocess.run([str(BIN / "alembic"), *args], cwd=ROOT, env=env,
                                    capture_output=True, text=True)
            assert result.returncode == 0, result.stdout + result.stderr
        assert "No new upgrade operations detected" in result.stdout + result.stderr
    finally:
        if kind == "postgresql":
            subprocess.run(["psql", "-h", "127.0.0.1", "-d", "test", "-q", "-c",
                            f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)


async def test_metrics_count_rooms_actions_and_errors():
    server = ServerProcess(redis="fake", metrics="true").start()
    try:
        host = server.create("Ann")
        ann = await Client(server, host["code"], host["token"]).connect()
        await ann.send({"type": "add_bot", "level": "easy"})
        refused = await ann.send({"type": "rematch"})
        assert refused["code"] == "not_over"
        body = httpx.get(f"{server.url}/metrics").text
        assert re.search(r'^mercyless_actions_total\{kind="add_bot"\} 1\.0$', body, re.M), body
        assert re.search(r'^mercyless_errors_total\{code="not_over"\} 1\.0$', body, re.M), body
        assert "mercyless_action_seconds_bucket" in body and "mercyless_sockets" in body
        await ann.close()
    finally:
        server.stop()


async def test_a_deadline_of_a_room_that_expired_is_dropped():
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    server = ServerProcess(redis="real").start()
    try:
        r = real_client()
        key = f"{server.prefix}:deadlines"
        r.zadd(key, {"ZZZZZZ": 0})  # a deadline left behind by a room that no longer exists
        for _ in range(200):  # the scheduler polls every 250 ms; this polls Redis, not the clock
            if r.zscore(key, "ZZZZZZ") is None:
                break
            await asyncio.sleep(0.05)
        assert r.zscore(key, "ZZZZZZ") is None
    finally:
        err = server.stop()
    assert "Traceback" not in err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_quiet_server_keeps_the_date_header_and_stops_at_once_on_a_signal(signum):
    """app.transport.serving wakes uvicorn's main loop once a second instead of ten times: the Date header
    is still there, and SIGTERM, or SIGINT (Ctrl-C in the terminal that runs ``mercyless serve``),
    still shuts the server down cleanly (startup and shutdown run). uvicorn raises the captured
    signal again once it has shut down; the KeyboardInterrupt a SIGINT becomes must not reach the
    console as a traceback."""
    server = ServerProcess(log_level="INFO").start()
    try:
        answer = httpx.get(f"{server.url}/healthz", timeout=5)
        assert re.fullmatch(r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT", answer.headers["date"])
        proc = server.proc
        assert proc is not None
        proc.send_signal(signum)
        assert proc.wait(10) in (0, -signum)
    finally:
        log = server.stop()
    assert "Application shutdown complete" in log
    assert "Traceback" not in log and "KeyboardInterrupt" not in log, log[-3000:]
