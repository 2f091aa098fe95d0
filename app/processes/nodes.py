"""This process among the others: its heartbeat, the list in Redis of the rooms where it holds
sockets (what a sweep reads if it dies), and taking over from processes that stopped beating."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import RedisError

from app.core.clock import Clock
from app.core.settings import Settings
from app.rooms import commands
from app.rooms.intent import Intent
from app.rooms.sockets import LocalSockets, RoomSocket
from app.storage.store import RoomStore

log = logging.getLogger("mercyless.hub")
#: what a Redis call may raise while Redis, or this process, is going away
GONE = (RedisError, RuntimeError, OSError)


class Nodes:
    def __init__(self, store: RoomStore, settings: Settings, clock: Clock, node_id: str,
                 sockets: LocalSockets, submit: Callable[[str, Intent], Awaitable[dict[str, Any]]],
                 attach: Callable[[RoomSocket], Awaitable[None]]) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self.node_id = node_id
        self.sockets = sockets
        self._submit = submit
        self._attach = attach
        self.held: set[str] = set()  # rooms listed under this process in Redis (it has sockets there)
        self._listing: set[str] = set()  # rooms whose entry in that list is being written
        self._relist: set[str] = set()  # ... and changed meanwhile: written again after
        self.unlisted: set[str] = set()  # rooms whose removal from the list failed
        self._beaten_ms: int | None = None  # this process's last heartbeat Redis took

    async def hold(self, code: str) -> None:
        """This process holds a socket of ``code`` (again): listed, if it was not."""
        if code not in self.held:
            self.held.add(code)
            await self.list_room(code)

    async def release(self, code: str) -> None:
        """The last socket of ``code`` here closed. Written even when not held: a reclaim
        (which empties the list) may be under way."""
        self.held.discard(code)
        await self.list_room(code)

    async def list_room(self, code: str) -> None:
        """Make this process's room list in Redis say what ``held`` says of ``code`` now. One
        write per room at a time, each writing the room's state at its turn (a change during a
        write is written after it), so a release and a hold a moment apart (the room's last
        socket closing, another opening) cannot land in the wrong order over two pooled
        connections. Rooms do not wait for each other, nor does the heartbeat, which also makes
        good a write lost to a Redis error."""
        if code in self._listing:
            self._relist.add(code)
            return
        self._listing.add(code)
        try:
            while True:
                self._relist.discard(code)
                held = code in self.held
                try:
                    if held:
                        await self.store.hold_room(self.node_id, code, self.settings.node_ttl_ms)
                    else:
                        await self.store.release_room(self.node_id, code)
                    self.unlisted.discard(code)
                except GONE:
                    if not held:
                        self.unlisted.add(code)
                if code not in self._relist:
                    return
        finally:
            self._listing.discard(code)

    async def heartbeat(self) -> None:
        """Beat every ``node_beat_ms``; hand over what processes that stopped beating held."""
        while True:
            await asyncio.sleep(self.settings.node_beat_ms / 1000 / self.clock.speed)
            try:
                await self.beat()
            except asyncio.CancelledError:
                raise
            except RedisError:
                continue
            except Exception:
                log.exception("heartbeat failed")

    async def first_beat(self) -> None:
        with contextlib.suppress(RedisError):  # known to the others before the first socket
            await self.store.beat(self.node_id, self.clock.now_ms(), self.settings.node_ttl_ms)

    async def beat(self) -> None:
        # the held rooms are listed again and failed removals retried; a hold or release
        # written meanwhile may cross these: an extra entry only costs a sweep a look at a
        # room where this process holds nobody, and a room held again while its old removal
        # was retried is listed once more below
        unlisted = self.unlisted - self.held
        now = self.clock.now_ms()
        # a process that could not beat for longer than a heartbeat lives was cut off from
        # Redis (a failover, an outage), and so were the others, most likely: they are judged
        # at the next beat, once they had a moment to beat again, not swept for Redis's fault
        cut_off = self._beaten_ms is not None and now - self._beaten_ms > self.settings.node_ttl_ms
        revived, dead = await self.store.beat(self.node_id, now, self.settings.node_ttl_ms,
                                              held=self.held, unlisted=unlisted)
        self._beaten_ms = now
        if cut_off:
            dead = []
        self.unlisted -= unlisted
        for code in unlisted & self.held:
            await self.list_room(code)
        if revived:  # others gave this process up (a long stall): claim its sockets again
            await self.reclaim()
        for node in dead:
            await self.sweep(node)

    async def retire(self) -> None:
        with contextlib.suppress(RedisError):
            await self.store.retire_node(self.node_id)

    async def sweep(self, node: str) -> None:
        """Mark the players ``node`` held disconnected, room by room, then forget ``node``.
        Two processes sweeping the same node at once is harmless: the second finds no change."""
        for code in await self.store.node_rooms(node):
            await self._submit(code, commands.command("node_lost", node))
        await self.store.forget_node(node)

    async def reclaim(self) -> None:
        self.held.clear()
        for code, conns in list(self.sockets.items()):
            for conn in list(conns.values()):
                # each step waits on Redis: a socket that went meanwhile is not brought back
                if self.sockets.current(conn):
                    await self._attach(conn)
                if self.sockets.current(conn):
                    await self._submit(code, commands.command("reclaimed", conn.player, self.node_id))
