"""The room's single writer: one inbox per room per process, processed one intent at a time.

Every intent (a player's message, a join, a socket that opens or drops, a timer tick: the
commands of app.rooms.commands) runs against the room as last committed, then the change is
committed to Redis with a version check. Losing that check means another process committed
first: the room is reloaded and the intent runs again on the new state (so an UNO call or a
catch is judged against the current state, never refused for being sent against an older
version). After a commit the actor sends each local socket its patch (app.rooms.fanout) and
re-arms the room's deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from functools import partial
from typing import Any

import orjson
from redis.exceptions import RedisError

from app.core.protocol import Err
from app.rooms import bot_seats, commands, fanout, timers
from app.rooms.intent import Intent, ack, error, no_change
from app.rooms.model import Loaded, Room, game_part
from app.rooms.outcomes import NoChange, Refused, Thinking
from app.rooms.services import RoomServices
from app.rooms.sockets import RoomSocket
from app.storage.store import Duplicate, Stale
from engine import Action, Event

EXPIRY_MARGIN_MS = 2000  # Redis's clock and ours differ a little; a tick must find the room gone
log = logging.getLogger("mercyless.room")
MAX_RETRIES = 8
CATCH_UP_RETRY_S = 0.5  # a catch-up that could not read the room tries again this much later
#: events a welcome carries (protocol addition ``welcome.log``), so a player who reloads or
#: comes back, or a spectator who just came, sees what happened lately
RECENT_EVENTS = 40


class RoomActor:
    def __init__(self, services: RoomServices, code: str) -> None:
        self.services = services
        self.code = code
        self.loaded: Loaded | None = None
        self.inbox: asyncio.Queue[Intent] = asyncio.Queue()
        self.task = asyncio.create_task(self._loop(), name=f"room-{code}")
        # what this process saw of the room lately (kept in memory: a process that just took the
        # room over starts with none)
        self.recent: deque[Event] = deque(maxlen=RECENT_EVENTS)
        self._kind = "tick"
        # (bot, version) searched for by a worker -> when it was asked (ms)
        self._thinking: dict[tuple[str, int], int] = {}

    def submit(self, intent: Intent) -> asyncio.Future[dict[str, Any]]:
        """Queue ``intent``; the future is its answer."""
        self.inbox.put_nowait(intent)
        return intent.done

    def submit_remote(self, version: int | None, events: list[Event],
                      document: dict[str, Any] | None = None) -> None:
        """Another process committed ``version`` (the room as committed, if the message carried
        it): catch up and patch the local sockets. ``None``: commits may have gone unheard (the
        channel was not listened to for a while): read the room and catch up on whatever is
        newer."""
        intent = Intent("remote", no_change)
        intent.remote = (version, events, document)
        self.inbox.put_nowait(intent)

    async def _catch_up(self, version: int | None, events: list[Event],
                        document: dict[str, Any] | None) -> None:
        """Take ``version`` unless this actor has it already (it reloads the room after losing
        a race, and may have refused or skipped the intent then), and bring every local socket
        that has not seen it up to date. The committed document comes with the commit's
        message; without it (a resync) the room is read from Redis."""
        loaded = self.loaded
        if version is None:  # a resync (no document): whatever Redis holds, if newer than the cache
            version = loaded.room.version + 1 if loaded is not None else 0
        if document is not None and (loaded is None or loaded.room.version < version):
            room = Room.from_dict(document)
            room.version = version
            loaded = self.loaded = Loaded(room)
            bot_seats.observe(loaded, events, self.services.settings)
            # the deadline is the committing process's now (and the index's): one this process
            # noted for an older version would only wake it for nothing
            self.services.deadlines.note_due(self.code, None)
        elif loaded is None or loaded.room.version < version:
            try:
                found = await self.services.store.load(self.code)
            except RedisError:
                # Redis is back later: read again then. A lost subscription's catch-up may come
                # while its node is still taking over (a cluster's failover), and nothing else
                # would catch these sockets up on the commit whose message died with the old node
                if self.services.sockets.get(self.code):
                    asyncio.get_running_loop().call_later(CATCH_UP_RETRY_S, self.submit_remote,
                                                          None, [], None)
                return
            if found is None:
                return
            stored, document = found
            if loaded is None or loaded.room.version < stored:
                room = Room.from_dict(document)
                room.version = stored
                loaded = self.loaded = Loaded(room)
                bot_seats.observe(loaded, events if stored == version else [], self.services.settings)
        seen = events if loaded.room.version == version else []
        self.fanout(loaded, seen, self.services.clock.now_ms(), behind_only=True)

    async def _loop(self) -> None:
        while True:
            intent = await self.inbox.get()
            try:
                if intent.remote is not None:
                    await self._catch_up(*intent.remote)
                    continue
                await self._process(intent)
            except Exception:  # a bug must never kill the room
                log.exception("intent %s failed", intent.kind, extra={"room": self.code})
                self.loaded = None
                intent.resolve(error(intent.msg_id, Err.INTERNAL, "internal error"))

    async def load(self) -> Loaded | None:
        if self.loaded is None:
            found = await self.services.store.load(self.code)
            if found is None:
                return None
            version, document = found
            room = Room.from_dict(document)
            room.version = version
            self.loaded = Loaded(room)
        return self.loaded

    async def _process(self, intent: Intent) -> None:
        services = self.services
        self._kind = intent.kind
        if intent.kind in commands.READ_STORED and self.loaded is not None:
            await self._catch_up(None, [], None)
        for _ in range(MAX_RETRIES):
            try:
                loaded = await self.load()
            except RedisError:
                intent.resolve(error(intent.msg_id, Err.UNAVAILABLE, "storage unavailable, try again"))
                return
            if loaded is None:
                intent.resolve(error(intent.msg_id, Err.ROOM_NOT_FOUND, "no such room"))
                if intent.kind == "tick":  # the room expired: its deadline must not fire again
                    await services.deadlines.arm(self.code, None)
                return
            # a repeated id needs no look-up first: the commit script refuses to commit over an
            # earlier answer (and returns it), and an answer without a commit is stored only if
            # none was
            now = services.clock.now_ms()
            try:
                events = intent.run(loaded, now)
            except Thinking:  # a worker searches for a bot's move: nothing changed yet
                intent.resolve(ack(intent.msg_id))
                # the index now holds when the search runs late (indexed_due), not the bot's due
                # time gone by, which woke the room again at every scheduler's wake-up
                await self._rearm()
                return
            except NoChange:
                answer = ack(intent.msg_id)
                if intent.kind not in commands.READ_STORED:
                    # an ack with nothing to change is an answer too: kept, so the same id sent
                    # again never applies after another message changed what it would do
                    answer, again = await self._kept(intent, answer, loaded.room.version)
                    if again:
                        continue
                self.after_no_change()  # (a sync's welcome before its ack)
                intent.resolve(answer)
                if intent.kind in ("tick", "bot_move"):  # early, or fired twice: index what is due
                    self.loaded = None
                    await self._rearm()
                return
            except Refused as refused:
                answer = error(intent.msg_id, refused.code, refused.message)
                services.metrics.errors.labels(refused.code).inc()
                answer, again = await self._kept(intent, answer, loaded.room.version)
                if again:
                    continue
                intent.resolve(answer)
                return
            except Exception:
                self.loaded = None  # whatever the bug changed is thrown away
                raise
            timers.schedule(loaded, now, services.settings)
            answer = ack(intent.msg_id)
            try:
                await self.commit(loaded, events, now, intent.answer_field, answer, intent)
            except Stale:
                self.loaded = None
                services.metrics.conflicts.inc()
                await self._rearm()
                continue
            except Duplicate as dup:
                # the first try committed, though its reply was lost: no message brings that
                # commit to this process's sockets, so they are caught up on it from Redis
                self.loaded = None
                await self._catch_up(None, [], None)
                intent.resolve(dup.answer)
                await self._rearm()
                return
            except RedisError:
                self.loaded = None
                intent.resolve(error(intent.msg_id, Err.UNAVAILABLE, "storage unavailable, try again"))
                return
            intent.resolve(answer)
            services.metrics.latency.observe(time.perf_counter() - intent.created)
            return
        self.loaded = None
        intent.resolve(error(intent.msg_id, Err.UNAVAILABLE, "the room is busy, try again"))

    async def _kept(self, intent: Intent, answer: dict[str, Any],
                    version: int) -> tuple[dict[str, Any], bool]:
        """An answer given without a commit (a refusal, an ack that changed nothing), stored
        under the message's id unless one was already: the answer to give (the earlier one if
        there was one), and whether the room moved on since ``version`` (judge it again)."""
        if not intent.answer_field:
            return answer, False
        try:
            earlier = await self.services.store.remember(self.code, intent.answer_field, answer, version)
        except Stale:
            self.loaded = None
            return answer, True
        except RedisError:
            # unchecked, the answer could contradict one already given to this id: the client
            # retries the same id instead
            self.loaded = None
            return error(intent.msg_id, Err.UNAVAILABLE, "storage unavailable, retry"), False
        return earlier or answer, False

    async def commit(self, loaded: Loaded, events: list[Event], now: int,
                     answer_field: str = "", answer: dict[str, Any] | None = None,
                     answering: Intent | None = None) -> None:
        """Commit ``loaded`` with the ``answer`` to the message (kept under ``answer_field``),
        then send each local socket its patch (``answering``'s socket gets the answer with
        it)."""
        services = self.services
        room = loaded.room
        expected = room.version
        room.version += 1
        room.updated_ms = now
        room.game = game_part(loaded.game, room.rules) if loaded.game is not None else None
        finished, room.finished_rounds = room.finished_rounds, []  # they go to the outbox
        due = self.indexed_due(loaded, now)
        document = room.document()
        message = b""
        # published only when a socket of the room is on another process: one whose cached copy
        # misses a commit finds it stale at its next commit, and a process where a hello is under
        # way records its node with a version-checked commit, after which this one publishes
        if services.publishes and room.held_elsewhere(services.node_id):
            # the document rides along: other processes need not read it back
            head = orjson.dumps({"origin": services.node_id, "version": room.version,
                                 "events": [[e.kind, e.data, e.owner, e.secret] for e in events]})
            message = b"".join((head[:-1], b',"doc":', document, b"}"))
        try:
            await services.store.commit(self.code, expected, room.version, document, answer_field,
                                   orjson.dumps(answer) if answer_field else b"", message,
                                   [orjson.dumps(entry) for entry in finished], deadline=due,
                                   steps=[orjson.dumps(step) for step in loaded.steps],
                                   new_round=loaded.new_round,
                                   ttl_ms=None if room.claimed else services.settings.unclaimed_room_ttl_ms)
        except BaseException:
            room.version = expected
            room.finished_rounds = finished
            raise
        loaded.steps, loaded.new_round = [], False
        services.metrics.count_action(self._kind)
        self.fanout(loaded, events, now, answering=answering, answer=answer)
        bot_seats.observe(loaded, events, services.settings)
        if finished and services.history is not None:
            try:  # committed already: a failure here only delays the record (the writer retries)
                await services.history.note(self.code)
            except RedisError:
                log.warning("history outbox not updated", extra={"room": self.code})
        services.deadlines.note_due(self.code, due)  # indexed in Redis by the commit itself

    def indexed_due(self, loaded: Loaded, now: int) -> int | None:
        """When the deadline index should wake the room: its next deadline (a bot's move whose
        search runs here: when the search is overdue), but no later than the moment its keys
        expire if nothing touches it (that tick finds it gone and drops the entry, so the index
        never outlives the room)."""
        version = loaded.room.version
        searching = [since for (_, asked), since in self._thinking.items() if asked == version]
        overdue = min(searching) + self.services.settings.bot_search_overdue_ms if searching else 0
        due = timers.next_due(loaded, self.services.settings, overdue)
        if due is None:
            return None
        expiry = loaded.room.updated_ms + self.services.store.ttl_ms + EXPIRY_MARGIN_MS
        return expiry if now < expiry < due else due

    async def _rearm(self) -> None:
        """A commit that lost may still have indexed its deadline: index the stored room's.
        The write is checked against the room's version after it is made: a commit that landed
        between the read and the write may have had its deadline overwritten with this older
        one (a bot's move indexed 60 s late), so the room is read and indexed again."""
        for _ in range(MAX_RETRIES):
            try:
                loaded = await self.load()
            except RedisError:
                return
            if loaded is None:
                return
            due = self.indexed_due(loaded, self.services.clock.now_ms())
            if await self.services.deadlines.arm(self.code, due, loaded.room.version):
                return
            self.loaded = None

    def fanout(self, loaded: Loaded, events: list[Event], now: int, behind_only: bool = False,
               answering: Intent | None = None, answer: dict[str, Any] | None = None) -> None:
        self.recent.extend(events)
        fanout.fanout(self.services.sockets.get(self.code), loaded, events, now, self.services.node_id,
                      self.recent, behind_only, answering, answer)

    def welcome(self, conn: RoomSocket) -> None:
        """Send ``conn`` the whole view at the current version (hello, sync)."""
        if self.loaded is not None:
            fanout.welcome(conn, self.loaded, self.services.clock.now_ms(), self.recent)

    def after_no_change(self) -> None:
        """Connections that still wait for their first view get it now."""
        conns = self.services.sockets.get(self.code)
        if conns and self.loaded is not None:
            for conn in conns.values():
                if conn.view is None:
                    self.welcome(conn)

    def tick_intent(self) -> Intent:
        return commands.command("tick", self.services.settings, self._tick_again, self._think)

    def _think(self, loaded: Loaded, player: str, level: str, now: int) -> Action | None:
        """``player``'s move: decided here when that is quick, else searched for by a worker
        (raises ``Thinking``; the move comes back as a ``bot_move`` for this version). A tick
        that fires again while the search runs does not start another; one that finds the
        search overdue (the workers starved of CPU) decides here, so the table never waits on
        them (the search's late answer is for an older version then, and is dropped)."""
        services = self.services
        thinker = services.thinker
        if thinker is None or level not in bot_seats.SEARCHING:
            return bot_seats.decide_here(loaded, player, level, now, services.settings)
        asked = (player, loaded.room.version)
        since = self._thinking.get(asked)
        if since is not None and now - since >= services.settings.bot_search_overdue_ms:
            log.info("bot search overdue: decided on the loop", extra={"room": self.code})
            return bot_seats.decide_here(loaded, player, level, now, services.settings)
        if since is None:
            self._thinking[asked] = now
            thought = bot_seats.thought(loaded, player, level, now, services.settings, thinker.budget_ms())
            thinker.submit(thought).add_done_callback(partial(self._thought, asked))
        raise Thinking

    def _thought(self, asked: tuple[str, int], done: asyncio.Future[Action | None]) -> None:
        self._thinking.pop(asked, None)
        action = None
        if not done.cancelled():
            if done.exception() is not None:
                log.warning("bot search failed: %r", done.exception(), extra={"room": self.code})
            else:
                action = done.result()
        self.inbox.put_nowait(commands.command("bot_move", self.services.settings, self._tick_again,
                                               self._think, *asked, action))

    def _tick_again(self) -> None:
        self.inbox.put_nowait(self.tick_intent())
