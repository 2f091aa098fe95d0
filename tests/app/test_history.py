"""The night's record: finished rounds reach the database (SQLite and PostgreSQL) exactly once,
survive a database outage, and replay through the engine to the same result."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from app.history.writer import HistoryWriter
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


def bearer(token: str) -> dict[str, str]:
    """The header the history routes take a member's token in (app/api/history.py)."""
    return {"authorization": f"Bearer {token}"}


async def _history(server: ServerProcess, code: str, token: str, rounds: int, timeout: float = 30) -> dict:
    async with httpx.AsyncClient(base_url=server.url, headers=bearer(token)) as http:
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
        body = await _history(server, code, ann.token, 3)
        rounds = [r for m in body["matches"] for r in m["rounds"]]
        assert [r["number"] for r in rounds] == [1, 2, 3]
        scores = {p["id"]: p["score"] for p in ann.view["players"]}
        last = rounds[-1]
        assert {s["id"]: s["score"] for s in last["seats"]} == scores  # running scores
        assert all(r["winner"] in {s["id"] for s in r["seats"]} for r in rounds)
        async with httpx.AsyncClient(base_url=server.url, headers=bearer(ann.token)) as http:
            one = (await http.get(f"/api/rounds/{rounds[0]['id']}")).json()
            assert one["number"] == 1 and len(one["seats"]) == 3
            rep = (await http.get(f"/api/rounds/{rounds[0]['id']}/replay")).json()
            assert rep["steps"][0]["step"] == 0 and len(rep["steps"]) == one["actions"] + 1
            # it opens as the table did: the deal's started event names the first card
            (started,) = [e for e in rep["steps"][0]["events"] if e["kind"] == "started"]
            assert re.fullmatch(r"[rygbw]-\w+", started["top"]), started  # (was missing: "Wild undefined")
            assert started["color"] in ("red", "yellow", "green", "blue")
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
        body = await _history(server, code, host["token"], 2, timeout=60)
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
    writer = HistoryWriter(store=None, metrics=None, sessions=None)  # type: ignore[arg-type]
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
    redis, store, a, b, gate, a_writing, writes = _two_writers(monkeypatch)
    key = store.outbox_key("R")
    await redis.rpush(key, json.dumps({"uid": "r1"}))
    slow = asyncio.create_task(a.flush("R"))
    await asyncio.wait_for(a_writing.wait(), 5)
    await b.flush("R")
    await redis.rpush(key, json.dumps({"uid": "r2"}))
    gate.set()
    await slow
    assert [json.loads(raw)["uid"] for raw in await redis.lrange(key, 0, -1)] == ["r2"]
    # and the room is in the index again, though r2's own note never came
    assert await redis.smembers(a.outbox_key()) == {b"R"}
    await b.flush("R")
    assert writes == [("A", "r1"), ("B", "r1"), ("B", "r2")]
    assert await redis.llen(key) == 0
    await redis.aclose()


async def test_an_outage_is_logged_as_a_retry_without_a_traceback_and_a_bug_with_one(caplog):
    """Redis or the database away: one warning line, no traceback (the crash tests read the
    logs for tracebacks); anything else is a bug and keeps its traceback."""
    writer = HistoryWriter(store=None, metrics=None, sessions=None, retry_ms=1)  # type: ignore[arg-type]
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


def _entry(code: str, match: int, number: int, *, over: bool = False, winner: str = "p1") -> dict:
    """A finished round as the commit leaves it in the outbox (app/rooms/play.py), made up."""
    players = ["p1", "p2", "p3"]
    return {
        "uid": f"{code}:{number}:{1000 * number}", "match": match, "round": number,
        "record": {"rules": {"target_score": 500}, "start_ms": 1000 * number, "seed": f"s{number}",
                   "players": players, "dealer": number % 3,
                   "steps": [{"player": "p1", "action": {"type": "draw"}, "now_ms": 5}] * number},
        "ended_ms": 1000 * number + 700, "match_over": over, "winner": winner, "reason": "emptied",
        "points": 10 * number,
        "seats": [{"seat": i, "player_id": p, "name": p.upper(), "bot_level": None if i == 0 else "easy",
                   "final_cards": i, "eliminated": i == 2, "score_after": 10 * number * (p == winner)}
                  for i, p in enumerate(players)]}


_TABLES_SQL = {
    "matches": "SELECT room_code, number, rules, started_ms, ended_ms, winner, winner_name FROM matches "
               "ORDER BY room_code, number",
    "rounds": "SELECT r.uid, m.room_code, m.number, r.room_code, r.number, r.seed, r.dealer, r.winner, "
              "r.reason, r.points, r.eliminations, r.started_ms, r.ended_ms, r.duration_ms, "
              "r.action_count, r.match_over FROM rounds r JOIN matches m ON m.id = r.match_id ORDER BY r.uid",
    "seats": "SELECT r.uid, s.seat, s.player_id, s.name, s.bot_level, s.final_cards, s.eliminated, "
             "s.score_after FROM round_seats s JOIN rounds r ON r.id = s.round_id ORDER BY r.uid, s.seat",
    "records": "SELECT r.uid, rr.record FROM round_records rr JOIN rounds r ON r.id = rr.round_id "
               "ORDER BY r.uid",
}


async def _tables(url: str) -> dict[str, list[tuple]]:
    out = {name: await _rows(url, sql) for name, sql in _TABLES_SQL.items()}
    out["records"] = [(uid, json.loads(blob)) for uid, blob in out["records"]]
    out["matches"] = [(*row[:2], json.loads(row[2]) if isinstance(row[2], str) else row[2], *row[3:])
                      for row in out["matches"]]
    return out


async def _fresh_database(kind: str, tmp_path: Path, name: str) -> str:
    from app.history.db import upgrade

    if kind == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / name}.sqlite3"
    else:
        db = f"mercyless_{uuid.uuid4().hex[:10]}"
        _psql(f"CREATE DATABASE {db}")
        url = f"postgresql+asyncpg://root@{PG}/{db}"
    await upgrade(url)
    return url


def _drop(url: str) -> None:
    if url.startswith("postgresql"):
        _psql(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_a_batch_writes_the_same_rows_as_one_round_at_a_time(kind, tmp_path):
    """Two rooms, a match that begins and ends inside the batch, a match begun by an earlier
    write, a round already stored and a round listed twice: the batch leaves every table as
    writing the rounds one by one does, each round once."""
    from app.history.db import make_engine, sessions
    from app.history.writer import write_round, write_rounds

    first = [("AAAA", _entry("AAAA", 1, 1))]
    batch = [("AAAA", _entry("AAAA", 1, 1)), ("AAAA", _entry("AAAA", 1, 2, over=True, winner="p2")),
             ("AAAA", _entry("AAAA", 2, 3)), ("BBBB", _entry("BBBB", 1, 1)),
             ("BBBB", _entry("BBBB", 1, 1)), ("AAAA", _entry("AAAA", 2, 4))]
    one_by_one = await _fresh_database(kind, tmp_path, "one")
    batched = await _fresh_database(kind, tmp_path, "batch")
    try:
        for url, write in ((one_by_one, "single"), (batched, "batch")):
            engine = make_engine(url)
            made = sessions(engine)
            for code, entry in first:
                await write_round(made, code, entry)
            if write == "single":
                for code, entry in batch:
                    await write_round(made, code, entry)
            else:
                await write_rounds(made, batch)
                await write_rounds(made, batch)  # again: nothing more
            await engine.dispose()
        expected, got = await _tables(one_by_one), await _tables(batched)
        assert len(got["rounds"]) == 5 and len(got["seats"]) == 15 and len(got["matches"]) == 3
        assert got == expected
        assert [m[5:] for m in got["matches"]] == [("p2", "P2"), (None, None), (None, None)]
    finally:
        _drop(one_by_one)
        _drop(batched)


@pytest.mark.parametrize("races", [1, 2])
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_a_batch_that_meets_another_writers_rows_is_tried_again(kind, races, tmp_path, monkeypatch):
    """Another process stores one of the batch's rounds right after the batch looked for
    stored ones: the transaction fails on the unique uid and is taken back. Tried again, the
    batch finds that round stored and writes the others; when the second try meets another
    such round too, the rounds are written one by one. Either way each is stored once."""
    import app.history.writer as history
    from app.history.db import make_engine, sessions

    url = await _fresh_database(kind, tmp_path, "race")
    engine = make_engine(url)
    made = sessions(engine)
    entries = [("CCCC", _entry("CCCC", 1, n)) for n in (1, 2, 3)]
    insert_rounds, write_round = history._insert_rounds, history.write_round
    singles, tries = [], []

    class Racing:
        """The batch's session, with the other process's write after its first query."""

        def __init__(self, session, entry):
            self.session, self.entry, self.raced = session, entry, False

        async def scalars(self, statement):
            result = await self.session.scalars(statement)
            if not self.raced:
                self.raced = True
                await write_round(made, *self.entry)
            return result

        def __getattr__(self, name):
            return getattr(self.session, name)

    async def racing(session, batch):
        tries.append(len(batch))
        if len(tries) <= races:
            session = Racing(session, entries[len(tries)])
        await insert_rounds(session, batch)

    async def counted(sessions_, code, entry):
        singles.append(entry["uid"])
        return await write_round(sessions_, code, entry)

    monkeypatch.setattr(history, "_insert_rounds", racing)
    monkeypatch.setattr(history, "write_round", counted)
    try:
        await history.write_rounds(made, entries)
        await engine.dispose()
        assert tries == [3, 3]
        assert singles == ([] if races == 1 else [e["uid"] for _, e in entries])
        rows = await _rows(url, "SELECT uid FROM rounds ORDER BY uid")
        assert rows == [(e["uid"],) for _, e in entries]
        assert (await _rows(url, "SELECT count(*) FROM round_seats")) == [(9,)]
        assert (await _rows(url, "SELECT count(*) FROM matches")) == [(1,)]
    finally:
        _drop(url)


async def test_a_flush_writes_every_waiting_room_in_one_batch_and_empties_the_index(tmp_path, monkeypatch):
    """Rounds of three rooms wait; one room is in the index with nothing left (another process
    took it): one flush writes the rounds in one call, trims the lists and the index."""
    from types import SimpleNamespace

    import fakeredis

    import app.history.writer as history

    redis = fakeredis.FakeAsyncRedis()
    store = SimpleNamespace(redis=redis, prefix="t", outbox_key=lambda code: f"t:{{{code}}}:outbox")
    counted = []
    hub = SimpleNamespace(store=store, metrics=SimpleNamespace(history=SimpleNamespace(inc=counted.append)))
    calls = []

    async def write_rounds(sessions, entries):
        calls.append([entry["uid"] for _, entry in entries])

    monkeypatch.setattr(history, "write_rounds", write_rounds)
    writer = HistoryWriter(hub.store, hub.metrics, "S")  # type: ignore[arg-type]
    for code, rounds in (("R1", 2), ("R2", 1), ("R3", 3)):
        for n in range(1, rounds + 1):
            await redis.rpush(store.outbox_key(code), json.dumps(_entry(code, 1, n)))
        await redis.sadd(writer.outbox_key(), code)
    await redis.sadd(writer.outbox_key(), "R4")
    await writer.flush_all()
    assert len(calls) == 1 and sorted(calls[0]) == sorted(
        f"{code}:{n}:{1000 * n}" for code, rounds in (("R1", 2), ("R2", 1), ("R3", 3))
        for n in range(1, rounds + 1))
    assert counted == [6] and writer.written == 6
    assert await redis.smembers(writer.outbox_key()) == set()
    assert [await redis.llen(store.outbox_key(c)) for c in ("R1", "R2", "R3")] == [0, 0, 0]
    await redis.aclose()


async def test_a_failed_batch_leaves_every_round_waiting(monkeypatch):
    from types import SimpleNamespace

    import fakeredis

    import app.history.writer as history

    redis = fakeredis.FakeAsyncRedis()
    store = SimpleNamespace(redis=redis, prefix="t", outbox_key=lambda code: f"t:{{{code}}}:outbox")
    hub = SimpleNamespace(store=store, metrics=SimpleNamespace(history=SimpleNamespace(inc=lambda n=1: None)))

    async def write_rounds(sessions, entries):
        raise OperationalError("INSERT", {}, OSError("down"))

    monkeypatch.setattr(history, "write_rounds", write_rounds)
    writer = HistoryWriter(hub.store, hub.metrics, "S")  # type: ignore[arg-type]
    for code in ("R1", "R2"):
        await redis.rpush(store.outbox_key(code), json.dumps(_entry(code, 1, 1)))
        await redis.sadd(writer.outbox_key(), code)
    await writer.flush_all()
    assert await redis.smembers(writer.outbox_key()) == {b"R1", b"R2"}
    assert [await redis.llen(store.outbox_key(c)) for c in ("R1", "R2")] == [1, 1]
    await redis.aclose()


async def test_rounds_that_end_close_together_are_written_in_one_transaction(monkeypatch):
    """The writer, woken by a round's end, waits ``gather_ms`` for the rounds ending about then
    and writes them in one call; stopping cuts the wait short."""
    from types import SimpleNamespace

    import fakeredis

    import app.history.writer as history

    redis = fakeredis.FakeAsyncRedis()
    store = SimpleNamespace(redis=redis, prefix="t", outbox_key=lambda code: f"t:{{{code}}}:outbox")
    hub = SimpleNamespace(store=store, metrics=SimpleNamespace(history=SimpleNamespace(inc=lambda n=1: None)))
    calls, wrote, idle = [], asyncio.Event(), asyncio.Event()

    async def write_rounds(sessions, entries):
        calls.append(sorted(entry["uid"] for _, entry in entries))
        wrote.set()

    monkeypatch.setattr(history, "write_rounds", write_rounds)
    writer = HistoryWriter(hub.store, hub.metrics, "S", retry_ms=60_000, gather_ms=300)  # type: ignore[arg-type]
    flush_all = writer.flush_all

    async def first_flush_then_idle() -> None:
        await flush_all()
        idle.set()

    writer.flush_all = first_flush_then_idle  # type: ignore[method-assign]
    task = asyncio.create_task(writer.run())
    await asyncio.wait_for(idle.wait(), 5)
    for code in ("R1", "R2"):
        await redis.rpush(store.outbox_key(code), json.dumps(_entry(code, 1, 1)))
        await writer.note(code)
    await asyncio.wait_for(wrote.wait(), 5)
    assert calls == [["R1:1:1000", "R2:1:1000"]]
    # a round ends, and the process stops while the writer gathers: it stops at once
    wrote.clear()
    await redis.rpush(store.outbox_key("R3"), json.dumps(_entry("R3", 1, 1)))
    writer.gather_ms = 60_000
    await writer.note("R3")
    await asyncio.wait_for(writer.stop(task, grace_s=30), 5)
    assert task.done() and not task.cancelled() and not wrote.is_set()
    assert await redis.llen(store.outbox_key("R3")) == 1  # waits in Redis for the next writer
    await redis.aclose()


def _two_writers(monkeypatch):
    """Writers A and B (two processes) on one Redis; A's writes wait for ``gate`` (set
    ``a_writing`` first); ``writes`` lists (writer, uid) as each writes."""
    import app.history.writer as history

    hub, redis, store = _fake_hub()
    gate, a_writing, writes = asyncio.Event(), asyncio.Event(), []

    async def write_rounds(sessions, entries):
        writes.extend((sessions, entry["uid"]) for _, entry in entries)
        if sessions == "A":
            a_writing.set()
            await gate.wait()

    monkeypatch.setattr(history, "write_rounds", write_rounds)
    a = HistoryWriter(hub.store, hub.metrics, "A")  # type: ignore[arg-type]
    b = HistoryWriter(hub.store, hub.metrics, "B")  # type: ignore[arg-type]
    return redis, store, a, b, gate, a_writing, writes


def _fake_hub():
    from types import SimpleNamespace

    import fakeredis

    redis = fakeredis.FakeAsyncRedis()
    store = SimpleNamespace(redis=redis, prefix="t", outbox_key=lambda code: f"t:{{{code}}}:outbox")
    counted: list[int] = []
    hub = SimpleNamespace(store=store, metrics=SimpleNamespace(
        history=SimpleNamespace(inc=lambda n=1: counted.append(n))))
    return hub, redis, store


async def test_a_round_that_cannot_be_written_holds_up_its_own_room_only(monkeypatch, caplog):
    """A batch fails on one round's data (not an outage): the batch is written room by room,
    the other rooms' rounds (and the bad room's rounds before it) go, the bad one waits in its
    room's outbox, logged as an error with the room's code."""
    import app.history.writer as history

    hub, redis, store = _fake_hub()
    stored: list[str] = []

    async def write_rounds(sessions, entries):
        if any(entry["uid"].startswith("BAD") for _, entry in entries):
            raise ValueError("a column too long")
        stored.extend(entry["uid"] for _, entry in entries)

    async def write_round(sessions, code, entry):
        if entry["uid"].startswith("BAD"):
            raise ValueError("a column too long")
        stored.append(entry["uid"])

    monkeypatch.setattr(history, "write_rounds", write_rounds)
    monkeypatch.setattr(history, "write_round", write_round)
    writer = HistoryWriter(hub.store, hub.metrics, "S")  # type: ignore[arg-type]
    rounds = {"R1": ["r1a", "r1b"], "R2": ["ok2", "BAD2", "after2"], "R3": ["r3a"]}
    for code, uids in rounds.items():
        for uid in uids:
            await redis.rpush(store.outbox_key(code), json.dumps({"uid": uid}))
        await redis.sadd(writer.outbox_key(), code)
    with caplog.at_level("WARNING", logger="mercyless.history"):
        await writer.flush_all()
    assert sorted(stored) == ["ok2", "r1a", "r1b", "r3a"]
    left = await redis.lrange(store.outbox_key("R2"), 0, -1)
    assert [json.loads(raw)["uid"] for raw in left] == ["BAD2", "after2"]
    assert await redis.smembers(writer.outbox_key()) == {b"R2"}
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and errors[0].room == "R2" and errors[0].exc_info is not None
    await redis.aclose()


async def test_a_flush_reads_a_bounded_share_of_a_backlog(monkeypatch):
    """After an outage: rooms are flushed a group at a time, each room's first rounds only;
    a room with more waiting stays in the index and the next flush takes the rest, in order."""
    import app.history.writer as history

    hub, redis, store = _fake_hub()
    batches: list[list[str]] = []

    async def write_rounds(sessions, entries):
        batches.append([entry["uid"] for _, entry in entries])

    monkeypatch.setattr(history, "write_rounds", write_rounds)
    monkeypatch.setattr(history, "ROUNDS_PER_ROOM", 3)
    monkeypatch.setattr(history, "ROOMS_PER_FLUSH", 2)
    writer = HistoryWriter(hub.store, hub.metrics, "S")  # type: ignore[arg-type]
    for code, count in (("A", 5), ("B", 1), ("C", 2)):
        for n in range(count):
            await redis.rpush(store.outbox_key(code), json.dumps({"uid": f"{code}{n}"}))
        await redis.sadd(writer.outbox_key(), code)
    await writer.flush_all()
    assert batches == [["A0", "A1", "A2", "B0"], ["C0", "C1"]]
    assert await redis.smembers(writer.outbox_key()) == {b"A"}
    await writer.flush_all()
    assert batches[2:] == [["A3", "A4"]]
    assert await redis.smembers(writer.outbox_key()) == set()
    assert writer.written == 8
    await redis.aclose()


async def test_a_record_that_no_longer_replays_gets_a_clear_refusal(tmp_path):
    """A stored round with a step the engine refuses (here by a player it does not seat; a
    round of an older engine that went past today's move limit is refused the same way): its
    summary is served, its replay is a 409 with a stable code, not a server error."""
    from sqlalchemy import select

    from app.api.history import _replay
    from app.api.rooms import ApiError
    from app.history.db import make_engine, sessions
    from app.history.models import Round
    from app.history.reads import load_round, round_summary
    from app.history.writer import write_round
    from engine import Action, ActionKind, Record, make_rules, new_game

    rules = make_rules({"turn_timer_s": 0})
    players = ("p1", "p2")
    s = new_game(players, rules, "old", now_ms=0).state
    wire = Record(players, rules.to_dict(), "old", s.dealer, (0, 0), 0).to_dict()
    wire["steps"] = [["p9", Action(ActionKind.DRAW).to_wire(), 5]]  # nobody this engine seats
    entry = _entry("DDDD", 1, 1)
    entry["record"] = wire
    url = await _fresh_database("sqlite", tmp_path, "replay")
    engine = make_engine(url)
    made = sessions(engine)
    round_id = await write_round(made, "DDDD", entry)
    async with made() as session:
        public_id = await session.scalar(select(Round.public_id).where(Round.id == round_id))
    row = await load_round(made, public_id)
    assert round_summary(row)["id"] == public_id
    with pytest.raises(ApiError) as refused:
        _replay(row, with_room=True)
    await engine.dispose()
    assert refused.value.status == 409 and refused.value.code == "replay_unavailable"


async def test_one_writer_flushes_at_a_time_and_the_others_leave_it_the_rounds(monkeypatch):
    """Writer A holds the flush lease while it writes; writer B (another process) finds it
    taken, reads nothing and leaves A's lease alone; once A is done the lease is free and B's
    next turn writes what ended meanwhile."""
    redis, store, a, b, gate, a_writing, writes = _two_writers(monkeypatch)
    await redis.rpush(store.outbox_key("R"), json.dumps({"uid": "r1"}))
    await redis.sadd(a.outbox_key(), "R")
    slow = asyncio.create_task(a.flush_all())
    await asyncio.wait_for(a_writing.wait(), 5)
    await b.flush_all()
    assert writes == [("A", "r1")] and await redis.get(a.lease_key()) == a._token.encode()
    await redis.rpush(store.outbox_key("S"), json.dumps({"uid": "s1"}))
    await redis.sadd(a.outbox_key(), "S")
    gate.set()
    await slow
    assert not await redis.exists(a.lease_key())
    await b.flush_all()
    assert writes == [("A", "r1"), ("B", "s1")]
    assert await redis.smembers(a.outbox_key()) == set()
    await redis.aclose()
