"""The night's record: finished rounds go from Redis to the database.

A round that ends is pushed to its room's outbox list (``<prefix>:{CODE}:outbox``) by the same
commit that ends it, and the room's code is put in the outbox index. The
:class:`HistoryWriter` (off every room's inbox) waits a moment after a round ends
(``HISTORY_GATHER_MS``), then writes every waiting round of every indexed room in one
transaction, each keyed by a unique ``uid``, so a retry after an outage or a crash writes it
once; only then is it taken off the outbox list. A database outage just leaves rounds waiting
in Redis until it returns; a sweep of the outbox keys now and then finds any room the index
missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import TYPE_CHECKING, Any

import orjson
from redis.exceptions import RedisError
from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError, SQLAlchemyError
from sqlalchemy.ext.asyncio import async_sessionmaker

from app.history.models import Match, Round, RoundRecord, RoundSeat

if TYPE_CHECKING:
    from app.core.metrics import Metrics
    from app.storage.store import RoomStore

log = logging.getLogger("mercyless.history")


def _match_row(code: str, entry: dict[str, Any]) -> dict[str, Any]:
    """The columns of the match a finished round ``entry`` of room ``code`` begins."""
    record = entry["record"]
    return {"room_code": code, "number": entry["match"], "rules": record["rules"],
            "started_ms": record["start_ms"]}


def new_public_id() -> str:
    """A round's id on the wire: 128 random bits, URL-safe (22 characters)."""
    return secrets.token_urlsafe(16)


def _round_row(code: str, entry: dict[str, Any], match_id: int) -> dict[str, Any]:
    """The columns of a finished round's row."""
    record = entry["record"]
    return {"uid": entry["uid"], "public_id": new_public_id(), "match_id": match_id,
            "room_code": code, "number": entry["round"],
            "seed": record["seed"], "dealer": record["players"][record["dealer"]],
            "winner": entry["winner"], "reason": entry.get("reason"), "points": entry.get("points", 0),
            "eliminations": sum(1 for seat in entry["seats"] if seat["eliminated"]),
            "started_ms": record["start_ms"], "ended_ms": entry["ended_ms"],
            "duration_ms": entry["ended_ms"] - record["start_ms"],
            "action_count": len(record["steps"]), "match_over": entry.get("match_over", False),
            # a round dealt from another room's shared deal names it (app/rooms/deals.py)
            "deal_of": (record.get("replayed_from") or {}).get("deal")}


def _match_result(entry: dict[str, Any]) -> dict[str, Any]:
    """What a round that ends its match writes on the match."""
    winner = entry["winner"]
    return {"ended_ms": entry["ended_ms"], "winner": winner,
            "winner_name": next((s["name"] for s in entry["seats"] if s["player_id"] == winner), None)}


async def write_round(sessions: async_sessionmaker, code: str, entry: dict[str, Any]) -> int:
    """Store one finished round (idempotent on ``entry["uid"]``); returns its id."""
    async with sessions() as session:
        existing = await session.scalar(select(Round.id).where(Round.uid == entry["uid"]))
        if existing is not None:
            return existing
        match = await session.scalar(
            select(Match).where(Match.room_code == code, Match.number == entry["match"]))
        if match is None:
            match = Match(**_match_row(code, entry))
            session.add(match)
            await session.flush()
        row = Round(**_round_row(code, entry, match.id))
        row.seats = [RoundSeat(**seat) for seat in entry["seats"]]
        row.record = RoundRecord(record=orjson.dumps(entry["record"]).decode())
        session.add(row)
        if entry.get("match_over"):
            for name, value in _match_result(entry).items():
                setattr(match, name, value)
        try:
            await session.commit()
        except IntegrityError:  # another process wrote it first
            await session.rollback()
            found = await session.scalar(select(Round.id).where(Round.uid == entry["uid"]))
            if found is None:
                raise
            return found
        return row.id


#: Rounds written in one transaction.
BATCH_ROUNDS = 200

#: Rounds read from one room's outbox per flush, and rooms per flush: what a flush holds in
#: memory stays bounded after an outage left a backlog (the rest waits for the next flush).
ROUNDS_PER_ROOM = 50
ROOMS_PER_FLUSH = 20

#: How long one writer may hold the flush lease (a flush takes well under a second; one that
#: outlives this lets another writer in, which only repeats idempotent writes).
LEASE_MS = 10_000
_RELEASE = """if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0"""

#: Failures that mean the database cannot be reached now (retried later, all rounds waiting),
#: unlike a statement that fails on a round's own data.
UNAVAILABLE = (OperationalError, InterfaceError, OSError, ConnectionError, TimeoutError)


async def write_rounds(sessions: async_sessionmaker, entries: list[tuple[str, dict[str, Any]]]) -> None:
    """Store finished rounds ``(code, entry)``, idempotent on each entry's ``uid`` as
    ``write_round``, in one transaction of a few statements whatever their number: at full
    load ~17 rounds end a second, and one ORM transaction per round (~6 queries, each a trip
    to the driver's thread with SQLite) cost ~10% of the server's CPU. A batch that meets a
    round or match another process stored meanwhile fails on a unique key once that process
    has committed: it is taken back and tried again (its check now finds those rows), and
    written round by round only if that fails too."""
    if not entries:
        return
    for _ in range(2):
        try:
            async with sessions() as session:
                await _insert_rounds(session, entries)
                await session.commit()
            return
        except IntegrityError:
            continue
    for code, entry in entries:
        await write_round(sessions, code, entry)


async def _insert_rounds(session: Any, entries: list[tuple[str, dict[str, Any]]]) -> None:
    uids = [entry["uid"] for _, entry in entries]
    stored = set((await session.scalars(select(Round.uid).where(Round.uid.in_(uids)))).all())
    todo: dict[str, tuple[str, dict[str, Any]]] = {}
    for code, entry in entries:
        if entry["uid"] not in stored:
            todo.setdefault(entry["uid"], (code, entry))
    if not todo:
        return
    wanted = {(code, entry["match"]) for code, entry in todo.values()}
    rows = await session.execute(
        select(Match.id, Match.room_code, Match.number)
        .where(Match.room_code.in_({code for code, _ in wanted}),
               Match.number.in_({number for _, number in wanted})))
    matches = {(code, number): match_id for match_id, code, number in rows}
    new_matches: dict[tuple[str, int], dict[str, Any]] = {}
    for code, entry in todo.values():
        key = (code, entry["match"])
        if key not in matches and key not in new_matches:
            new_matches[key] = _match_row(code, entry)
    if new_matches:
        made = await session.execute(insert(Match).returning(Match.id, Match.room_code, Match.number),
                                     list(new_matches.values()))
        matches.update({(code, number): match_id for match_id, code, number in made})
    round_rows = [_round_row(code, entry, matches[(code, entry["match"])]) for code, entry in todo.values()]
    made = await session.execute(insert(Round).returning(Round.id, Round.uid), round_rows)
    ids = {uid: round_id for round_id, uid in made}
    seats = [{**seat, "round_id": ids[uid]} for uid, (_, entry) in todo.items() for seat in entry["seats"]]
    if seats:  # (an empty list would insert one row of defaults)
        await session.execute(insert(RoundSeat), seats)
    await session.execute(insert(RoundRecord), [
        {"round_id": ids[uid], "record": orjson.dumps(entry["record"]).decode()}
        for uid, (_, entry) in todo.items()])
    for code, entry in todo.values():
        if entry.get("match_over"):
            await session.execute(update(Match).where(Match.id == matches[(code, entry["match"])])
                                  .values(**_match_result(entry)))


class HistoryWriter:
    """Moves finished rounds from Redis to the database, retrying until it can."""

    def __init__(self, store: RoomStore, metrics: Metrics, sessions: async_sessionmaker,
                 retry_ms: int = 1000, gather_ms: int = 0) -> None:
        self.store = store
        self.metrics = metrics
        self.sessions = sessions
        self.retry_ms = retry_ms
        self.gather_ms = gather_ms
        self.wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self.written = 0
        self._token = secrets.token_hex(8)  # this writer's mark on the lease

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    @stopping.setter
    def stopping(self, value: bool) -> None:
        if value:
            self._stopping.set()
        else:
            self._stopping.clear()

    async def stop(self, task: asyncio.Task[None], grace_s: float = 5.0) -> None:
        """Let a write under way finish, then end ``task`` (this writer's ``run``): a write
        cancelled half-way makes the database driver log its cancelled statement as an error,
        and what it had not written stays in Redis anyway."""
        self.stopping = True
        self.wake.set()
        done, _ = await asyncio.wait([task], timeout=grace_s)
        if not done:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def outbox_key(self) -> str:
        return f"{self.store.prefix}:history"

    def lease_key(self) -> str:
        return f"{self.store.prefix}:history:lease"

    async def sweep(self) -> None:
        """Index every room that has rounds waiting (after a crash between commit and index)."""
        redis = self.store.redis
        async for key in redis.scan_iter(match=f"{self.store.prefix}:*:outbox", count=500):
            code = key.decode().rsplit("{", 1)[-1].split("}", 1)[0]
            await redis.sadd(self.outbox_key(), code)

    async def run(self) -> None:
        rounds = 0
        while not self.stopping:
            # cleared before the flush: a round noted while it runs wakes the next one at once
            self.wake.clear()
            try:
                if rounds % 60 == 0:
                    await self.sweep()
                rounds += 1
                await self.flush_all()
            except asyncio.CancelledError:
                raise
            except (RedisError, SQLAlchemyError, OSError) as exc:
                # an outage of Redis or the database: expected, retried, and not a bug (no
                # traceback in the log, as for every other Redis call that meets one)
                log.warning("history not written yet; will retry: %s: %s", type(exc).__name__, exc)
            except Exception:
                log.warning("history not written yet; will retry", exc_info=True)
            if self.stopping:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), self.retry_ms / 1000)
            if self.wake.is_set() and self.gather_ms and not self.stopping:
                # a round ended: let the others ending about now join its transaction
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), self.gather_ms / 1000)

    async def flush_all(self) -> None:
        """Flush every indexed room, if no other process's writer is flushing: every writer
        reads the same index, and with n processes each round was read, parsed and looked up
        n times (and their inserts raced). A writer that finds the lease taken leaves the
        rounds to its holder, or to its own next turn; a lease whose holder died expires."""
        redis = self.store.redis
        codes = sorted(c.decode() for c in await redis.smembers(self.outbox_key()))
        # (taken only when rounds wait: an idle writer's look, once a second, leaves no key)
        if not codes or not await redis.set(self.lease_key(), self._token, nx=True, px=LEASE_MS):
            return
        try:
            for start in range(0, len(codes), ROOMS_PER_FLUSH):
                if self.stopping:
                    return
                await self.flush(*codes[start:start + ROOMS_PER_FLUSH])
        finally:
            with contextlib.suppress(RedisError):
                await redis.eval(_RELEASE, 1, self.lease_key(), self._token)

    async def flush(self, *codes: str) -> None:
        """Write the first ``ROUNDS_PER_ROOM`` rounds waiting in each of these rooms'
        outboxes, up to ``BATCH_ROUNDS`` a transaction, then take each written one off its list
        and a room whose list is then empty off the index (one with more waiting stays)."""
        redis = self.store.redis
        async with redis.pipeline(transaction=False) as pipe:
            for code in codes:
                pipe.lrange(self.store.outbox_key(code), 0, ROUNDS_PER_ROOM - 1)
            lists: list[list[bytes]] = await pipe.execute()
        waiting = [(code, raw) for code, raws in zip(codes, lists, strict=True) for raw in raws]
        written = await self._write(waiting)
        unwritten = {code for code, raw in waiting if (code, raw) not in written}
        done = sorted(code for code in set(codes) if code not in unwritten)
        if not written and not done:
            return
        async with redis.pipeline(transaction=False) as pipe:
            # each entry written goes by its value (every entry holds its round's uid), not by
            # position: another process may be flushing the same room and have trimmed the
            # head already, and trimming it again would drop a round that ended meanwhile
            for code, raw in written:
                pipe.lrem(self.store.outbox_key(code), 1, raw)
            for code in done:
                pipe.srem(self.outbox_key(), code)
                pipe.llen(self.store.outbox_key(code))
            results = await pipe.execute()
        # more waiting (a round that ended meanwhile, or past ROUNDS_PER_ROOM): the room goes
        # back in the index (its own commit's note may have come before this srem)
        left = results[len(written) + 1::2]
        again = [code for code, count in zip(done, left, strict=True) if count]
        if again:
            await redis.sadd(self.outbox_key(), *again)

    async def _write(self, waiting: list[tuple[str, bytes]]) -> set[tuple[str, bytes]]:
        """Write ``waiting`` in batches; returns the entries written. A database that cannot
        be reached leaves the rest waiting; a batch that fails on its data is written room by
        room, so one bad round holds up its own room only (logged as the bug it is)."""
        written: set[tuple[str, bytes]] = set()
        for start in range(0, len(waiting), BATCH_ROUNDS):
            if self.stopping and start:
                break
            batch = waiting[start:start + BATCH_ROUNDS]
            try:
                await write_rounds(self.sessions, [(code, orjson.loads(raw)) for code, raw in batch])
            except UNAVAILABLE:
                log.warning("database unavailable; %d rounds stay in Redis", len(waiting) - len(written))
                break
            except Exception:
                if not await self._write_room_by_room(batch, written):
                    break
                continue
            written.update(batch)
            self.written += len(batch)
            self.metrics.history.inc(len(batch))
        return written

    async def _write_room_by_room(self, batch: list[tuple[str, bytes]],
                                  written: set[tuple[str, bytes]]) -> bool:
        """False: the database went away meanwhile."""
        rooms: dict[str, list[bytes]] = {}
        for code, raw in batch:
            rooms.setdefault(code, []).append(raw)
        for code, raws in rooms.items():
            try:
                for raw in raws:
                    await write_round(self.sessions, code, orjson.loads(raw))
                    written.add((code, raw))
                    self.written += 1
                    self.metrics.history.inc()
            except UNAVAILABLE:
                log.warning("database unavailable; rounds stay in Redis", extra={"room": code})
                return False
            except Exception:
                log.error("a finished round cannot be written; its room's record waits",
                          exc_info=True, extra={"room": code})
        return True

    async def note(self, code: str) -> None:
        """A round of ``code`` ended: put the room in the outbox and wake the writer."""
        await self.store.redis.sadd(self.outbox_key(), code)
        self.wake.set()
