"""The night's record: finished rounds reach the database (SQLite and PostgreSQL) exactly once,
survive a database outage, and replay through the engine to the same result."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from app.history import HistoryWriter
from engine import Record, replay

from .harness import Client, ServerProcess, real_redis_available

PG = "127.0.0.1:5432"


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path: Path):
    if request.param == "sqlite":
        path = tmp_path / "history.sqlite3"
        yield f"sqlite+aiosqlite:///{path}"
        return
    name = f"mercyless_{uuid.uuid4().hex[:10]}"
    _psql(f"CREATE DATABASE {name}")
    yield f"postgresql+asyncpg://root@{PG}/{name}"
    _psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _psql(sql: str) -> None:
    subprocess.run(["psql", "-h", "127.0.0.1", "-d", "test", "-q", "-c", sql], check=True,
                   capture_output=True)


async def _rows(url: str, sql: str) -> list[tuple]:
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    async with engine.connect() as conn:
        rows = [tuple(r) for r in (await conn.execute(text(sql)))]
    await engine.dispose()
    return rows


async def _play_rounds(server: ServerProcess, rounds: int, seed: int) -> tuple[str, Client]:
    host = server.create("Ann")
    return await _play_rounds_in(server, host["code"], host["token"], rounds, seed, ("easy", "normal"))


async def _history(server: ServerProcess, code: str, rounds: int, timeout: float = 30) -> dict:
    async with httpx.AsyncClient(base_url=server.url) as http:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            body = (await http.get(f"/api/rooms/{code}/history")).json()
            written = sum(len(m["rounds"]) for m in body["matches"])
            if written >= rounds:
                return body
            assert asyncio.get_running_loop().time() < deadline, f"only {written} rounds written"
            await asyncio.sleep(0.1)  # polling an HTTP endpoint: there is no event to wait on


async def test_a_night_is_recorded_and_every_round_replays(database):
    url = database
    server = ServerProcess(redis="fake", database_url=url).start()
    try:
        code, ann = await _play_rounds(server, 3, seed=4)
        body = await _history(server, code, 3)
        rounds = [r for m in body["matches"] for r in m["rounds"]]
        assert [r["number"] for r in rounds] == [1, 2, 3]
        scores = {p["id"]: p["score"] for p in ann.view["players"]}
        last = rounds[-1]
        assert {s["id"]: s["score"] for s in last["seats"]} == scores  # running scores
        assert all(r["winner"] in {s["id"] for s in r["seats"]} for r in rounds)
        async with httpx.AsyncClient(base_url=server.url) as http:
            one = (await http.get(f"/api/rounds/{rounds[0]['id']}")).json()
            assert one["number"] == 1 and len(one["seats"]) == 3
            rep = (await http.get(f"/api/rounds/{rounds[0]['id']}/replay")).json()
            assert rep["steps"][0]["step"] == 0 and len(rep["steps"]) == one["actions"] + 1
            assert rep["steps"][-1]["table"]["game"]["winner"] == one["winner"]
            for step in rep["steps"]:  # public: no hand in any step
                assert step["table"]["hand"] == []
            assert (await http.get("/api/rounds/999999")).status_code == 404
        await ann.close()
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]
    # exactly once, and every stored record replays to the stored result
    rows = await _rows(url, "SELECT r.uid, r.winner, r.points, rr.record FROM rounds r "
                           "JOIN round_records rr ON rr.round_id = r.id ORDER BY r.number")
    assert len(rows) == 3 and len({r[0] for r in rows}) == 3
    for uid, winner, points, blob in rows:
        state = replay(Record.from_dict(json.loads(blob)))
        assert state.players[state.winner] == winner, uid
        assert state.points == points
    seats = await _rows(url, "SELECT count(*) FROM round_seats")
    assert seats[0][0] == 9


class FaultProxy:
    """A TCP proxy the test can cut: the database seems to go away, then comes back."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.open = True
        self.server: asyncio.base_events.Server | None = None
        self.links: list[asyncio.StreamWriter] = []

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _handle(self, reader, writer) -> None:
        if not self.open:
            writer.close()
            return
        try:
            up_r, up_w = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self.links += [writer, up_w]

        async def pipe(r, w):
            with contextlib.suppress(Exception):
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            w.close()

        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))

    def cut(self) -> None:
        self.open = False
        for w in self.links:
            w.close()
        self.links.clear()

    def restore(self) -> None:
        self.open = True

    async def stop(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()


async def test_a_database_outage_mid_night_delays_the_record_but_loses_nothing():
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    name = f"mercyless_{uuid.uuid4().hex[:10]}"
    _psql(f"CREATE DATABASE {name}")
    proxy = FaultProxy(("127.0.0.1", 5432))
    port = await proxy.start()
    url = f"postgresql+asyncpg://root@127.0.0.1:{port}/{name}"
    # started from a thread: the proxy lives on this event loop and must serve the migration
    server = await asyncio.to_thread(ServerProcess(redis="real", database_url=url).start)
    try:
        host = await asyncio.to_thread(server.create, "Ann")
        code = host["code"]
        proxy.cut()  # the database goes away before the first round ends
        _, ann = await _play_rounds_in(server, code, host["token"], 2, seed=9)
        async with httpx.AsyncClient(base_url=server.url) as http:
            ready = await http.get("/readyz")
            assert ready.status_code == 503 and ready.json()["database"] is False
        proxy.restore()
        body = await _history(server, code, 2, timeout=60)
        rounds = [r for m in body["matches"] for r in m["rounds"]]
        assert [r["number"] for r in rounds] == [1, 2]
        await ann.close()
    finally:
        err = server.stop()
        await proxy.stop()
    assert "Traceback" not in err or "history not written yet" in err
    rows = await _rows(f"postgresql+asyncpg://root@{PG}/{name}",
                       "SELECT count(*), count(DISTINCT uid) FROM rounds")
    assert rows[0] == (2, 2)
    _psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def _play_rounds_in(server, code, token, rounds, seed, levels=("easy", "easy")):
    """Ann and two bots play ``rounds`` rounds (rematches between), scores far from a match."""
    ann = await Client(server, code, token).connect()
    for level in levels:
        assert (await ann.send({"type": "add_bot", "level": level}))["type"] == "ack"
    assert (await ann.send({"type": "set_rules", "rules": {"target_score": 5000}}))["type"] == "ack"
    assert (await ann.send({"type": "start"}))["type"] == "ack"
    rng = random.Random(seed)
    for n in range(1, rounds + 1):
        await ann.until_view(lambda v, n=n: v["room"]["round"] == n and v["room"]["status"] == "playing")
        while ann.view["room"]["status"] == "playing":
            if ann.my_turn():
                await ann.play_turn(rng)
            else:
                await ann.until(lambda m: m["type"] in ("patch", "welcome"), timeout=30)
        if n < rounds:
            assert (await ann.send({"type": "rematch"}))["type"] == "ack"
    return code, ann


def _blocked_writer() -> tuple[HistoryWriter, asyncio.Event, asyncio.Event, list[str]]:
    """A writer whose first flush starts, then waits for ``release``."""
    writer = HistoryWriter(hub=None, sessions=None)  # type: ignore[arg-type]
    started, release, log = asyncio.Event(), asyncio.Event(), []

    async def sweep() -> None:
        log.append("sweep")

    async def flush_all() -> None:
        started.set()
        await release.wait()
        log.append("written")

    writer.sweep = sweep  # type: ignore[method-assign]
    writer.flush_all = flush_all  # type: ignore[method-assign]
    return writer, started, release, log


async def test_stopping_the_writer_lets_a_write_under_way_finish():
    writer, started, release, log = _blocked_writer()
    task = asyncio.create_task(writer.run())
    await asyncio.wait_for(started.wait(), 5)
    stopping = asyncio.create_task(writer.stop(task, grace_s=30))
    await asyncio.wait([stopping], timeout=0.05)  # stop waits while the write is under way
    assert not stopping.done() and not task.done()
    release.set()
    await asyncio.wait_for(stopping, 5)
    assert log == ["sweep", "written"] and task.done() and not task.cancelled()


async def test_a_write_that_outlasts_the_grace_is_cancelled():
    writer, started, _, log = _blocked_writer()
    task = asyncio.create_task(writer.run())
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.wait_for(writer.stop(task, grace_s=0.05), 5)
    assert task.cancelled() and log == ["sweep"]


async def test_two_writers_flushing_one_room_never_drop_a_round_that_ended_meanwhile(monkeypatch):
    """Writer A reads the room's waiting round r1 and is slow to write it; writer B (another
    process) writes r1 and takes it off; round r2 ends. When A finishes it takes r1 off by its
    value: r2 waits for the next flush instead of being trimmed away as 'the head'."""
    from types import SimpleNamespace

    import fakeredis

    import app.history as history

    redis = fakeredis.FakeAsyncRedis()
    store = SimpleNamespace(redis=redis, prefix="t", outbox_key=lambda code: f"t:{{{code}}}:outbox")
    hub = SimpleNamespace(store=store, metrics=SimpleNamespace(history=SimpleNamespace(inc=lambda: None)))
    gate, a_writing, writes = asyncio.Event(), asyncio.Event(), []

    async def write_round(sessions, code, entry):
        writes.append((sessions, entry["uid"]))
        if sessions == "A":
            a_writing.set()
            await gate.wait()

    monkeypatch.setattr(history, "write_round", write_round)
    a = HistoryWriter(hub, "A")  # type: ignore[arg-type]
    b = HistoryWriter(hub, "B")  # type: ignore[arg-type]
    key = store.outbox_key("R")
    await redis.rpush(key, json.dumps({"uid": "r1"}))
    slow = asyncio.create_task(a.flush("R"))
    await asyncio.wait_for(a_writing.wait(), 5)
    await b.flush("R")
    await redis.rpush(key, json.dumps({"uid": "r2"}))
    gate.set()
    await slow
    assert [json.loads(raw)["uid"] for raw in await redis.lrange(key, 0, -1)] == ["r2"]
    await b.flush("R")
    assert writes == [("A", "r1"), ("B", "r1"), ("B", "r2")]
    assert await redis.llen(key) == 0
    await redis.aclose()


async def test_an_outage_is_logged_as_a_retry_without_a_traceback_and_a_bug_with_one(caplog):
    """Redis or the database away: one warning line, no traceback (the crash tests read the
    logs for tracebacks); anything else is a bug and keeps its traceback."""
    writer = HistoryWriter(hub=None, sessions=None, retry_ms=1)  # type: ignore[arg-type]
    failures = [RedisConnectionError("Error 111 connecting"), ConnectionRefusedError(111, "refused"),
                OperationalError("SELECT 1", {}, OSError("down")), KeyError("bug")]

    async def sweep() -> None:
        pass

    async def flush_all() -> None:
        if not failures:
            writer.stopping = True
            return
        raise failures.pop(0)

    writer.sweep = sweep  # type: ignore[method-assign]
    writer.flush_all = flush_all  # type: ignore[method-assign]
    with caplog.at_level("WARNING", logger="mercyless.history"):
        await asyncio.wait_for(writer.run(), 5)
    records = [r for r in caplog.records if r.name == "mercyless.history"]
    assert [r.exc_info is not None for r in records] == [False, False, False, True]
    assert "ConnectionError: Error 111" in records[0].getMessage()
