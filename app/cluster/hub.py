"""The process-wide runtime: room actors, local sockets, the deadline scheduler and the Redis
channel that carries other processes' commits to this one's sockets."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from typing import TYPE_CHECKING, Any

import orjson
from redis.exceptions import RedisError

from app.cluster.limits import AddressLimits
from app.cluster.subscriber import Subscriber
from app.core.clock import Clock
from app.core.metrics import Metrics
from app.core.settings import Settings
from app.rooms import logic
from app.rooms.actor import RoomActor
from app.rooms.intent import Intent
from app.storage.store import RoomStore
from app.transport.relay import Relay
from engine import Event, EventKind

if TYPE_CHECKING:
    from app.transport.connection import Connection

log = logging.getLogger("mercyless.hub")
#: what a Redis call may raise while Redis, or this process, is going away
GONE = (RedisError, RuntimeError, OSError)


class Hub:
    def __init__(self, settings: Settings, store: RoomStore, clock: Clock, *, publishes: bool) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self.publishes = publishes
        self.origin = secrets.token_hex(6)
        self._own_messages = b'{"origin":"%s"' % self.origin.encode()  # how commit messages begin
        self.actors: dict[str, RoomActor] = {}
        self.connections: dict[str, dict[str, Connection]] = {}
        self.metrics = Metrics()
        self._last_used: dict[str, float] = {}
        self._wake = asyncio.Event()
        self._local_due: dict[str, int] = {}
        self._next_wake_ms = 0  # when the waiting scheduler wakes anyway (clock ms)
        self._subscribed: set[str] = set()  # rooms whose commit channel this process listens to
        self._held: set[str] = set()  # rooms listed under this process in Redis (it has sockets there)
        self._listing: set[str] = set()  # rooms whose entry in that list is being written
        self._relist: set[str] = set()  # ... and changed meanwhile: written again after
        self._unlisted: set[str] = set()  # rooms whose removal from the list failed
        self.history: Any = None  # the HistoryWriter, once the app has a database
        self.limits = AddressLimits(store, settings.failed_joins_per_min, settings.sockets_per_ip)
        self._tasks: list[asyncio.Task[None]] = []
        self.subscriber: Subscriber | None = None
        self.relay: Relay | None = None  # sockets of rooms homed elsewhere go there (app/relay.py)
        self._node_channel = b""
        self._beating: asyncio.Task[None] | None = None
        self._leaving: asyncio.Task[None] | None = None  # set once stopping

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        with contextlib.suppress(RedisError):  # known to the others before the first socket
            await self.store.beat(self.origin, self.clock.now_ms(), self.settings.node_ttl_ms)
        self._tasks.append(asyncio.create_task(self._scheduler(), name="scheduler"))
        self._beating = asyncio.create_task(self._heartbeat(), name="heartbeat")
        self._tasks.append(self._beating)
        if self.publishes and self.settings.redis_url:
            self.subscriber = Subscriber(self.settings.redis_url, self._remote_commit,
                                         self._deaf_for_a_while)
            if self.settings.relay_sockets:
                self.relay = Relay(self)
                self.relay.start()
                self._node_channel = self.store.node_channel(self.origin).encode()
                self.subscriber.channels.add(self._node_channel)
            self._tasks.append(asyncio.create_task(self.subscriber.run(), name="listener"))

    def stopping(self) -> None:
        """The process got its stop signal, before its server closes the sockets: the other
        processes hear it now (its heartbeat goes, the relay says so), so the players it drops
        reconnect through them and take its rooms over instead of being sent back here."""
        if self._leaving is not None:
            return
        if self._beating is not None:
            self._beating.cancel()
        if self.relay is not None:
            self.relay.leave()
        self._leaving = asyncio.create_task(self._retire(), name="retire")

    async def _retire(self) -> None:
        with contextlib.suppress(RedisError):
            await self.store.retire_node(self.origin)

    async def stop(self) -> None:
        self.stopping()
        for task in self._tasks:
            task.cancel()
        for conns in self.connections.values():
            for conn in conns.values():
                conn.close(1012)
        if self._leaving is not None:  # the heartbeat's removal, started by stopping()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._leaving, 1.0)
        with contextlib.suppress(Exception):
            # a clean stop: the players come back through another process; until they do they
            # are disconnected (not after node_ttl_ms, as for a crash)
            await asyncio.wait_for(self._sweep(self.origin), 2.0)
        for actor in self.actors.values():
            actor.task.cancel()
        if self.relay is not None:
            await self.relay.stop()
        if self.subscriber is not None:
            await self.subscriber.close()

    def actor(self, code: str) -> RoomActor:
        actor = self.actors.get(code)
        if actor is None:
            actor = self.actors[code] = RoomActor(self, code)
            self.metrics.rooms.set(len(self.actors))
        self._last_used[code] = time.monotonic()
        return actor

    def _evict_idle(self, idle_s: float = 60.0) -> None:
        """Forget actors of rooms with no local socket, nothing queued and nothing due here for
        a minute (a room is reloaded from Redis when it is needed again)."""
        now = time.monotonic()
        for code, actor in list(self.actors.items()):
            if (code not in self.connections and code not in self._local_due and actor.inbox.empty()
                    and now - self._last_used.get(code, 0) > idle_s):
                actor.task.cancel()
                del self.actors[code]
                self._last_used.pop(code, None)
        self.metrics.rooms.set(len(self.actors))
        self.metrics.sockets.set(sum(len(c) for c in self.connections.values()))

    async def submit(self, code: str, intent: Intent) -> dict[str, Any]:
        return await self.actor(code).submit(intent)

    # -- sockets ------------------------------------------------------------------------------

    async def attach(self, conn: Connection) -> None:
        conns = self.connections.setdefault(conn.code, {})
        old = conns.get(conn.player)
        conns[conn.player] = conn
        if old is not None and old is not conn:
            old.close(4409)
        # not "the first socket of the room": the hello of another socket may have put it in
        # ``conns`` (ws._hello) before this one got here
        if conn.code not in self._held:
            self._held.add(conn.code)
            await self._list_room(conn.code)
        if self.subscriber is not None and conn.code not in self._subscribed:
            self._subscribed.add(conn.code)
            with contextlib.suppress(*GONE):  # down: subscribed again (and caught up) on reconnect
                await self.subscriber.subscribe(self.store.channel(conn.code))
            # the hello was committed before this process listened to the room: what other
            # processes committed in between was not heard, so read the room once now (also when
            # the confirmation was slow: the subscription stands once Redis answers)
            self.actor(conn.code).submit_remote(None, [], None)

    async def detach(self, conn: Connection) -> bool:
        """Forget ``conn``; True when it was the player's current socket (not a replaced one)."""
        conns = self.connections.get(conn.code)
        if not conns or conns.get(conn.player) is not conn:
            return False
        del conns[conn.player]
        if not conns:
            del self.connections[conn.code]
            # written even when not in _held: a reclaim (which empties it) may be under way
            self._held.discard(conn.code)
            await self._list_room(conn.code)
            if self.subscriber is not None and conn.code in self._subscribed:
                self._subscribed.discard(conn.code)
                await self.subscriber.unsubscribe(self.store.channel(conn.code))
        return True

    async def _list_room(self, code: str) -> None:
        """Make this process's room list in Redis (what a sweep reads if the process dies) say
        what ``_held`` says of ``code`` now. One write per room at a time, each writing the
        room's state at its turn (a change during a write is written after it), so a release
        and a hold a moment apart (the room's last socket closing, another opening) cannot land
        in the wrong order over two pooled connections. Rooms do not wait for each other, nor
        does the heartbeat, which also makes good a write lost to a Redis error."""
        if code in self._listing:
            self._relist.add(code)
            return
        self._listing.add(code)
        try:
            while True:
                self._relist.discard(code)
                held = code in self._held
                try:
                    if held:
                        await self.store.hold_room(self.origin, code, self.settings.node_ttl_ms)
                    else:
                        await self.store.release_room(self.origin, code)
                    self._unlisted.discard(code)
                except GONE:
                    if not held:
                        self._unlisted.add(code)
                if code not in self._relist:
                    return
        finally:
            self._listing.discard(code)

    # -- deadlines ----------------------------------------------------------------------------

    async def arm(self, code: str, due: int | None, version: int | None = None) -> bool:
        """Record the room's next deadline in Redis (for every process) and locally. False when
        the room moved on from ``version`` meanwhile: the caller reads it again and re-arms."""
        try:
            current = await self.store.set_deadline(code, due, version)
        except RedisError:
            log.warning("could not index deadline", extra={"room": code})
            current = True  # the local note stands; the next commit indexes the room again
        self.note_due(code, due)
        return current

    def note_due(self, code: str, due: int | None) -> None:
        """Remember the room's next deadline for this process's scheduler (``None``: this
        process no longer watches it; the index in Redis still does)."""
        if due is None:
            self._local_due.pop(code, None)
        else:
            self._local_due[code] = due
            # most commits set a deadline (a turn timer, a bot's delay) well after the
            # scheduler's next wake-up: waking it for those cost a Redis round trip each
            if due < self._next_wake_ms:
                self._wake.set()

    async def _scheduler(self) -> None:
        poll = self.settings.scheduler_poll_ms
        while True:
            now = self.clock.now_ms()
            # a deadline noted here fires here even when the index says otherwise: the index may
            # hold a later time written by a process that lost a race (its tick finds nothing to
            # do if the room really moved on, and indexes the room again)
            mine = [c for c, t in self._local_due.items() if t <= now]
            try:
                due = set(await self.store.due_rooms(now)).union(mine)
            except RedisError:
                due = set(mine)
            for code in due:
                self._local_due.pop(code, None)
                self.metrics.timers.inc()
                actor = self.actor(code)
                actor.submit(actor.tick_intent())
            self._evict_idle()
            upcoming = min(self._local_due.values(), default=None)
            wait = poll if upcoming is None else max(0, min(poll, upcoming - self.clock.now_ms()))
            self._next_wake_ms = self.clock.now_ms() + max(wait, 1)
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(wait, 1) / 1000 / self.clock.speed)

    # -- processes --------------------------------------------------------------------------

    async def _heartbeat(self) -> None:
        """Beat every ``node_beat_ms``; hand over what processes that stopped beating held."""
        while True:
            await asyncio.sleep(self.settings.node_beat_ms / 1000 / self.clock.speed)
            try:
                await self._beat()
            except asyncio.CancelledError:
                raise
            except RedisError:
                continue
            except Exception:
                log.exception("heartbeat failed")

    async def _beat(self) -> None:
        # the held rooms are listed again and failed removals retried; a hold or release
        # written meanwhile may cross these: an extra entry only costs a sweep a look at a
        # room where this process holds nobody, and a room held again while its old removal
        # was retried is listed once more below
        unlisted = self._unlisted - self._held
        revived, dead = await self.store.beat(self.origin, self.clock.now_ms(), self.settings.node_ttl_ms,
                                              held=self._held, unlisted=unlisted)
        self._unlisted -= unlisted
        for code in unlisted & self._held:
            await self._list_room(code)
        if revived:  # others gave this process up (a long stall): claim its sockets again
            await self._reclaim()
        for node in dead:
            await self._sweep(node)

    async def _sweep(self, node: str) -> None:
        """Mark the players ``node`` held disconnected, room by room, then forget ``node``.
        Two processes sweeping the same node at once is harmless: the second finds no change."""
        for code in await self.store.node_rooms(node):
            actor = self.actor(code)
            await actor.submit(Intent("presence", lambda loaded, now: logic.node_lost(loaded, node, now)))
        await self.store.forget_node(node)

    async def _reclaim(self) -> None:
        self._held.clear()
        for code, conns in list(self.connections.items()):
            for conn in list(conns.values()):
                # each step waits on Redis: a socket that went meanwhile is not brought back
                if self._current(conn):
                    await self.attach(conn)
                if self._current(conn):
                    await self.submit(code, Intent(
                        "hello", lambda loaded, now, p=conn.player: logic.connected(loaded, p, self.origin)))

    def _current(self, conn: Connection) -> bool:
        return not conn.closed and self.connections.get(conn.code, {}).get(conn.player) is conn

    # -- other processes' commits -------------------------------------------------------------

    def _deaf_for_a_while(self) -> None:
        """The commit channels are heard again after a lost Redis connection: catch every local
        socket up on what was committed meanwhile."""
        for code in list(self.connections):
            self.actor(code).submit_remote(None, [], None)
        if self.relay is not None:
            self.relay.heard_again()

    def _remote_commit(self, channel: bytes, data: bytes) -> None:
        if channel == self._node_channel:  # a relayed socket's traffic
            assert self.relay is not None
            self.relay.on_message(data)
            return
        if data.startswith(self._own_messages):  # this process's own commit: nothing to parse
            return
        code = channel.decode().rsplit("{", 1)[-1].rstrip("}")
        if code not in self.connections:
            return
        body = orjson.loads(data)
        actor = self.actor(code)
        actor.submit_remote(int(body["version"]),
                            [Event(EventKind(k), d, o, sec) for k, d, o, sec in body["events"]],
                            body.get("doc"))
