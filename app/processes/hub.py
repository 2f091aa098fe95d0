"""The process's rooms and sockets among the others: a room actor per room in use, the local
sockets, the deadline scheduler (app.processes.scheduler), this process's place among the others
(app.processes.nodes), and the Redis channels that carry other processes' commits to its sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any, Protocol

import orjson

from app.core.clock import Clock
from app.core.metrics import Metrics
from app.core.protocol import Close
from app.core.settings import Settings
from app.processes.limits import AddressLimits
from app.processes.nodes import GONE, Nodes
from app.processes.quotas import Quotas
from app.processes.scheduler import Scheduler
from app.processes.thinkers import BotPool
from app.rooms.actor import RoomActor
from app.rooms.events import event_kind
from app.rooms.intent import Intent
from app.rooms.services import HistoryOutbox, RoomServices
from app.rooms.sockets import LocalSockets, RoomSocket
from app.storage import pubsub
from app.storage.store import RoomStore
from engine import Event

log = logging.getLogger("mercyless.hub")

#: An actor of a room with no socket here, nothing queued and nothing due, unused this long, goes.
EVICT_IDLE_S = 60.0
#: How often such actors are looked for (each look walks every actor of the process).
EVICT_EVERY_S = 5.0


class NodeLink(Protocol):
    """Sockets relayed between processes (``app.transport.relay.Relay``), as the hub drives it."""

    def start(self) -> None: ...

    def leave(self) -> None: ...

    async def stop(self) -> None: ...

    def heard_again(self) -> None: ...

    def on_message(self, data: bytes) -> None: ...


class Hub:
    def __init__(self, settings: Settings, store: RoomStore, clock: Clock, *, publishes: bool,
                 metrics: Metrics | None = None, history: HistoryOutbox | None = None,
                 make_relay: Callable[[], NodeLink] | None = None) -> None:
        """``make_relay`` builds the relay of sockets whose room is homed on another process
        (with Redis, ``RELAY_SOCKETS``)."""
        self.settings = settings
        self.store = store
        self.clock = clock
        self.publishes = publishes
        self.node_id = secrets.token_hex(6)
        self._own_messages = b'{"origin":"%s"' % self.node_id.encode()  # how commit messages begin
        self.metrics = metrics or Metrics()
        self.sockets = LocalSockets()
        self.actors: dict[str, RoomActor] = {}
        self._last_used: dict[str, float] = {}
        self.scheduler = Scheduler(store, clock, self.metrics, settings.scheduler_poll_ms,
                                   self._fire, self._housekeep)
        self._next_eviction = 0.0  # (time.monotonic) when _housekeep next looks for idle actors
        # read when scraped: counting on every scheduler wake-up walked every room's sockets
        self.metrics.sockets.set_function(self.sockets.count)
        self.metrics.rooms.set_function(lambda: len(self.actors))
        self.nodes = Nodes(store, settings, clock, self.node_id, self.sockets, self.submit, self.attach)
        # the bots' searches, in worker processes started at the first one
        self.bot_pool = BotPool(settings.bot_workers, settings.hard_bot_budget_ms) \
            if settings.bot_workers > 0 else None
        self.services = RoomServices(settings, store, clock, self.metrics, self.sockets, self.scheduler,
                                     self.node_id, publishes, history, self.bot_pool)
        self.limits = AddressLimits(store, settings)
        self.quotas = Quotas(store, settings)
        self._make_relay = make_relay
        self._subscribed: set[str] = set()  # rooms whose commit channel this process listens to
        self._tasks: list[asyncio.Task[None]] = []
        self.subscriber: pubsub.Listener | None = None
        self.relay: NodeLink | None = None  # sockets of rooms homed elsewhere go there
        self._node_channel = b""
        self._beating: asyncio.Task[None] | None = None
        self._leaving: asyncio.Task[None] | None = None  # set once stopping

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        await self.nodes.first_beat()
        self._tasks.append(asyncio.create_task(self.scheduler.run(), name="scheduler"))
        self._beating = asyncio.create_task(self.nodes.heartbeat(), name="heartbeat")
        self._tasks.append(self._beating)
        if self.publishes and self.settings.redis_url:
            self.subscriber = pubsub.listener(self.settings.redis_url, self.store.shards, self._remote_commit,
                                              self._deaf_for_a_while)
            if self._make_relay is not None:
                relay = self.relay = self._make_relay()
                relay.start()
                self._node_channel = self.store.node_channel(self.node_id).encode()
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
        self._leaving = asyncio.create_task(self.nodes.retire(), name="retire")

    @property
    def leaving(self) -> bool:
        """The process got its stop signal (``stopping``)."""
        return self._leaving is not None

    async def stop(self) -> None:
        self.stopping()
        for task in self._tasks:
            task.cancel()
        self.sockets.close_all(Close.RESTART)
        if self._leaving is not None:  # the heartbeat's removal, started by stopping()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._leaving, 1.0)
        with contextlib.suppress(Exception):
            # a clean stop: the players come back through another process; until they do they
            # are disconnected (not after node_ttl_ms, as for a crash)
            await asyncio.wait_for(self.nodes.sweep(self.node_id), 2.0)
        for actor in self.actors.values():
            actor.task.cancel()
        if self.bot_pool is not None:
            self.bot_pool.close()
        if self.relay is not None:
            await self.relay.stop()
        if self.subscriber is not None:
            await self.subscriber.close()

    # -- rooms --------------------------------------------------------------------------------

    def actor(self, code: str) -> RoomActor:
        actor = self.actors.get(code)
        if actor is None:
            actor = self.actors[code] = RoomActor(self.services, code)
        self._last_used[code] = time.monotonic()
        return actor

    async def submit(self, code: str, intent: Intent) -> dict[str, Any]:
        return await self.actor(code).submit(intent)

    def _fire(self, code: str) -> None:
        actor = self.actor(code)
        actor.submit(actor.tick_intent())

    def _housekeep(self, now: float | None = None) -> None:
        """After each of the scheduler's wake-ups: the idle actors go, looked for every
        ``EVICT_EVERY_S``. A wake-up comes for the deadlines of every room (a bot's think time, a
        catch window), hundreds a second in a busy process: a walk of every actor on each took
        an eighth of the process's CPU at 2,000 rooms (``bench.city``)."""
        now = time.monotonic() if now is None else now
        if now >= self._next_eviction:
            self._next_eviction = now + EVICT_EVERY_S
            self._evict_idle(now)

    def _evict_idle(self, now: float, idle_s: float = EVICT_IDLE_S) -> None:
        """Forget actors of rooms with no local socket, nothing queued and nothing due here for
        ``idle_s`` (a room is reloaded from Redis when it is needed again)."""
        for code, actor in list(self.actors.items()):
            if (code not in self.sockets and code not in self.scheduler.local_due and actor.inbox.empty()
                    and now - self._last_used.get(code, 0) > idle_s):
                actor.task.cancel()
                del self.actors[code]
                self._last_used.pop(code, None)

    # -- sockets ------------------------------------------------------------------------------

    async def attach(self, conn: RoomSocket) -> None:
        """``conn`` said hello here: its room is listed under this process and its commits
        heard."""
        self.sockets.put(conn)
        # not "the first socket of the room": the hello of another socket may have put it in
        # the room's sockets (commands "hello") before this one got here
        await self.nodes.hold(conn.code)
        if self.subscriber is not None and conn.code not in self._subscribed:
            self._subscribed.add(conn.code)
            with contextlib.suppress(*GONE):  # down: subscribed again (and caught up) on reconnect
                await self.subscriber.subscribe(self.store.channel(conn.code))
            # the hello was committed before this process listened to the room: what other
            # processes committed in between was not heard, so read the room once now (also when
            # the confirmation was slow: the subscription stands once Redis answers)
            self.actor(conn.code).submit_remote(None, [], None)

    async def detach(self, conn: RoomSocket) -> bool:
        """Forget ``conn``; True when it was the player's current socket (not a replaced one)."""
        if not self.sockets.take(conn):
            return False
        if conn.code not in self.sockets:
            await self.nodes.release(conn.code)
            if self.subscriber is not None and conn.code in self._subscribed:
                self._subscribed.discard(conn.code)
                await self.subscriber.unsubscribe(self.store.channel(conn.code))
        return True

    # -- other processes' commits -------------------------------------------------------------

    def _deaf_for_a_while(self) -> None:
        """The commit channels are heard again after a lost Redis connection: catch every local
        socket up on what was committed meanwhile."""
        for code in list(self.sockets):
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
        if code not in self.sockets:
            return
        body = orjson.loads(data)
        actor = self.actor(code)
        actor.submit_remote(int(body["version"]),
                            [Event(event_kind(k), d, o, sec) for k, d, o, sec in body["events"]],
                            body.get("doc"))
