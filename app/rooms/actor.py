"""The room's single writer: one inbox per room per process, processed one intent at a time.

Every intent (a player's message, a join, a socket that opens or drops, a timer tick) runs
against the room as last committed, then the change is committed to Redis with a version
check. Losing that check means another process committed first: the room is reloaded and the
intent runs again on the new state (so an UNO call or a catch is judged against the current
state, never refused for being sent against an older version). After a commit the actor sends
each local socket its patch and re-arms the room's deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

import orjson
from redis.exceptions import RedisError

from app.core.protocol import Err
from app.rooms import logic
from app.rooms import timers as bots
from app.rooms.diff import DiffMemo, patch_json
from app.rooms.intent import Intent, ack, error, no_change
from app.rooms.model import Loaded, Room, game_part, room_views
from app.storage.store import Duplicate, Stale
from engine import Event, autoplay

if TYPE_CHECKING:
    from app.cluster.hub import Hub
    from app.transport.connection import Connection

EXPIRY_MARGIN_MS = 2000  # Redis's clock and ours differ a little; a tick must find the room gone
log = logging.getLogger("mercyless.room")
MAX_RETRIES = 8
TICK_STEPS = 200

class RoomActor:
    def __init__(self, hub: Hub, code: str) -> None:
        self.hub = hub
        self.code = code
        self.loaded: Loaded | None = None
        self.inbox: asyncio.Queue[Intent] = asyncio.Queue()
        self.task = asyncio.create_task(self._loop(), name=f"room-{code}")
        self.ticking = False
        self._kind = "tick"

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
            bots.observe(loaded, events, self.hub.settings)
            # the deadline is the committing process's now (and the index's): one this process
            # noted for an older version would only wake it for nothing
            self.hub.note_due(self.code, None)
        elif loaded is None or loaded.room.version < version:
            try:
                found = await self.hub.store.load(self.code)
            except RedisError:  # the hub catches every local socket up when Redis is back
                return
            if found is None:
                return
            stored, document = found
            if loaded is None or loaded.room.version < stored:
                room = Room.from_dict(document)
                room.version = stored
                loaded = self.loaded = Loaded(room)
                bots.observe(loaded, events if stored == version else [], self.hub.settings)
        seen = events if loaded.room.version == version else []
        self.fanout(loaded, seen, self.hub.clock.now_ms(), behind_only=True)

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
            found = await self.hub.store.load(self.code)
            if found is None:
                return None
            version, document = found
            room = Room.from_dict(document)
            room.version = version
            self.loaded = Loaded(room)
        return self.loaded

    async def _process(self, intent: Intent) -> None:
        hub = self.hub
        self._kind = intent.kind
        for _ in range(MAX_RETRIES):
            try:
                loaded = await self.load()
            except RedisError:
                intent.resolve(error(intent.msg_id, Err.UNAVAILABLE, "storage unavailable, try again"))
                return
            if loaded is None:
                intent.resolve(error(intent.msg_id, Err.ROOM_NOT_FOUND, "no such room"))
                if intent.kind == "tick":  # the room expired: its deadline must not fire again
                    await hub.arm(self.code, None)
                return
            # a repeated id needs no look-up first: the commit script refuses to commit over an
            # earlier answer (and returns it), and a refusal is stored only if none was
            now = hub.clock.now_ms()
            try:
                events = intent.run(loaded, now)
            except logic.NoChange:
                self.after_no_change()  # (a sync's welcome before its ack)
                intent.resolve(ack(intent.msg_id))
                if intent.kind == "tick":  # early, or fired twice: index what is really due next
                    self.loaded = None
                    await self._rearm()
                return
            except logic.Refused as refused:
                answer = error(intent.msg_id, refused.code, refused.message)
                hub.metrics.errors.labels(refused.code).inc()
                if intent.answer_field:
                    try:
                        earlier = await hub.store.remember(self.code, intent.answer_field, answer,
                                                           loaded.room.version)
                    except Stale:  # judged against a room that has moved on: judge it again
                        self.loaded = None
                        continue
                    except RedisError:
                        # unchecked, the refusal could contradict an answer already given to this
                        # id (an ack): the client retries the same id instead
                        self.loaded = None
                        intent.resolve(error(intent.msg_id, Err.UNAVAILABLE, "storage unavailable, retry"))
                        return
                    answer = earlier or answer
                intent.resolve(answer)
                return
            except Exception:
                self.loaded = None  # whatever the bug changed is thrown away
                raise
            bots.schedule(loaded, now, hub.settings)
            answer = ack(intent.msg_id)
            try:
                await self.commit(loaded, events, now, intent.answer_field, answer, intent)
            except Stale:
                self.loaded = None
                hub.metrics.conflicts.inc()
                await self._rearm()
                continue
            except Duplicate as dup:
                self.loaded = None
                intent.resolve(dup.answer)
                await self._rearm()
                return
            except RedisError:
                self.loaded = None
                intent.resolve(error(intent.msg_id, Err.UNAVAILABLE, "storage unavailable, try again"))
                return
            intent.resolve(answer)
            hub.metrics.latency.observe(time.perf_counter() - intent.created)
            return
        self.loaded = None
        intent.resolve(error(intent.msg_id, Err.UNAVAILABLE, "the room is busy, try again"))

    async def commit(self, loaded: Loaded, events: list[Event], now: int,
                     answer_field: str = "", answer: dict[str, Any] | None = None,
                     answering: Intent | None = None) -> None:
        """Commit ``loaded`` with the ``answer`` to the message (kept under ``answer_field``),
        then send each local socket its patch (``answering``'s socket gets the answer with
        it)."""
        hub = self.hub
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
        if hub.publishes and room.held_elsewhere(hub.origin):
            # the document rides along: other processes need not read it back
            head = orjson.dumps({"origin": hub.origin, "version": room.version,
                                 "events": [[e.kind, e.data, e.owner, e.secret] for e in events]})
            message = b"".join((head[:-1], b',"doc":', document, b"}"))
        try:
            await hub.store.commit(self.code, expected, room.version, document, answer_field,
                                   orjson.dumps(answer) if answer_field else b"", message,
                                   [orjson.dumps(entry) for entry in finished], deadline=due,
                                   steps=[orjson.dumps(step) for step in loaded.steps],
                                   new_round=loaded.new_round)
        except BaseException:
            room.version = expected
            room.finished_rounds = finished
            raise
        loaded.steps, loaded.new_round = [], False
        hub.metrics.count_action(self._kind)
        self.fanout(loaded, events, now, answering=answering, answer=answer)
        bots.observe(loaded, events, hub.settings)
        if finished and hub.history is not None:
            try:  # committed already: a failure here only delays the record (the writer retries)
                await hub.history.note(self.code)
            except RedisError:
                log.warning("history outbox not updated", extra={"room": self.code})
        hub.note_due(self.code, due)  # indexed in Redis by the commit itself

    def indexed_due(self, loaded: Loaded, now: int) -> int | None:
        """When the deadline index should wake the room: its next deadline, but no later than
        the moment its keys expire if nothing touches it (that tick finds it gone and drops the
        entry, so the index never outlives the room)."""
        due = bots.next_due(loaded, self.hub.settings)
        if due is None:
            return None
        expiry = loaded.room.updated_ms + self.hub.store.ttl_ms + EXPIRY_MARGIN_MS
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
            if await self.hub.arm(self.code, self.indexed_due(loaded, self.hub.clock.now_ms()),
                                  loaded.room.version):
                return
            self.loaded = None

    def fanout(self, loaded: Loaded, events: list[Event], now: int, behind_only: bool = False,
               answering: Intent | None = None, answer: dict[str, Any] | None = None) -> None:
        """Send each local socket its update, a patch from the view it has or else the whole
        view (``behind_only``: only those that have not seen ``loaded``'s version yet);
        ``answering``'s socket gets ``answer`` behind its patch, in the same write. The frames
        are made as bytes: orjson's own output, the patch's fixed head and its events (the
        same for every viewer who owns no secret in them) made once per fan-out."""
        conns = self.hub.connections.get(self.code)
        if not conns:
            return
        room = loaded.room
        members, elsewhere = room.members_and_elsewhere(self.hub.origin)
        targets: list[Connection] = []
        for conn in list(conns.values()):
            player = conn.player
            if player not in members:  # removed by the host, or left
                conn.close(4401)
                continue
            if player in elsewhere:  # the player said hello on another process
                conn.close(4409)
                continue
            if behind_only and conn.view is not None and conn.version >= room.version:
                continue
            targets.append(conn)
        if not targets:
            return
        # every view shares its public parts, and the differ remembers what it found for a
        # shared pair of old and new parts: the public part is diffed once per fan-out
        public, views = room_views(loaded, [conn.player for conn in targets], now)
        memo: DiffMemo = {}
        # the events as each viewer may see them: one list for every viewer who owns no
        # secret in them, serialised once
        owners = {e.owner for e in events if e.owner is not None}
        wire: dict[str | None, bytes] = {}
        version = room.version
        head = b'{"type":"patch","version":%d,"now":%d,"ops":' % (version, now)
        reply = answering.reply if answering is not None and answer is not None else None
        for conn in targets:
            view = views[conn.player]
            if conn.view is None or conn.version != version - 1:
                frame = _welcome_frame(conn.player, version, now, view)
            else:
                key = conn.player if conn.player in owners else None
                seen = wire.get(key)
                if seen is None:
                    seen = wire[key] = b',"events":%b}' % orjson.dumps([e.to_wire(key) for e in events])
                frame = head + patch_json(conn.view, view, memo, conn.public, public) + seen
            if conn is reply:
                conn.send_frames([frame, orjson.dumps(answer)])
                answering.reply = None  # answered (if the send raised, the error answer goes out)
            else:
                conn.send(frame)
            conn.view = view
            conn.public = public
            conn.version = version

    def welcome(self, conn: Connection) -> None:
        """Send ``conn`` the whole view at the current version (hello, sync)."""
        if self.loaded is None:
            return
        room = self.loaded.room
        now = self.hub.clock.now_ms()
        public, views = room_views(self.loaded, (conn.player,), now)
        view = views[conn.player]
        conn.send(_welcome_frame(conn.player, room.version, now, view))
        conn.view = view
        conn.public = public
        conn.version = room.version

    def after_no_change(self) -> None:
        """Connections that still wait for their first view get it now."""
        conns = self.hub.connections.get(self.code)
        if conns and self.loaded is not None:
            for conn in conns.values():
                if conn.view is None:
                    self.welcome(conn)

    # -- timers -------------------------------------------------------------------------------

    def tick_intent(self) -> Intent:
        return Intent("tick", self._tick)

    def _tick(self, loaded: Loaded, now: int) -> list[Event]:
        step = bots.due_step(loaded, now, self.hub.settings)
        if step is None:
            raise logic.NoChange
        kind, what = step
        if kind == "grace":
            events = logic.replace_by_bot(loaded, what)
        elif kind == "system":
            events = logic.game_action(loaded, None, what, now)
        else:
            player, action = what
            try:
                events = logic.game_action(loaded, player, action, now)
            except logic.Refused as refused:  # a policy bug must not stall the table
                log.error("bot move refused (%s): %s", refused.code, action, extra={"room": self.code})
                game = loaded.game
                assert game is not None
                fallback = autoplay.auto_action(game.clone(), game.players.index(player))
                events = logic.game_action(loaded, player, fallback, now)
        bots.schedule(loaded, now, self.hub.settings, acted=what[0] if kind == "bot" else None)
        # more may be due at once (bots with no think time, several expiries)
        self.inbox.put_nowait(self.tick_intent())
        return events


def _welcome_frame(player: str, version: int, now: int, view: dict[str, Any]) -> bytes:
    """protocol.md ``welcome``: ``player``'s whole view at ``version``."""
    return orjson.dumps({"type": "welcome", "you": player, "version": version, "now": now, "state": view})
