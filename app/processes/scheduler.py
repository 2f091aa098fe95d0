"""The deadline scheduler: wakes a room when its next deadline comes (a turn timer, a catch
window, a bot's think time, a reconnect grace).

Every commit indexes its room's next deadline in Redis, so whichever process is alive fires it;
a deadline this process committed is also noted here, so its own rooms wake without a look at
the index.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from redis.exceptions import RedisError

from app.core.clock import Clock
from app.core.metrics import Metrics
from app.storage.store import RoomStore

log = logging.getLogger("mercyless.hub")


class Scheduler:
    def __init__(self, store: RoomStore, clock: Clock, metrics: Metrics, poll_ms: int,
                 fire: Callable[[str], None], after_each: Callable[[], None]) -> None:
        """``fire(code)`` wakes the room; ``after_each`` runs after every wake-up (housekeeping)."""
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.poll_ms = poll_ms
        self._fire = fire
        self._after_each = after_each
        self.local_due: dict[str, int] = {}
        self._wake = asyncio.Event()
        self._next_wake_ms = 0  # when the waiting scheduler wakes anyway (clock ms)

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
        """Remember the room's next deadline for this process (``None``: this process no longer
        watches it; the index in Redis still does)."""
        if due is None:
            self.local_due.pop(code, None)
        else:
            self.local_due[code] = due
            # most commits set a deadline (a turn timer, a bot's delay) well after the
            # scheduler's next wake-up: waking it for those cost a Redis round trip each
            if due < self._next_wake_ms:
                self._wake.set()

    async def run(self) -> None:
        poll = self.poll_ms
        while True:
            now = self.clock.now_ms()
            # a deadline noted here fires here even when the index says otherwise: the index may
            # hold a later time written by a process that lost a race (its tick finds nothing to
            # do if the room really moved on, and indexes the room again)
            mine = [c for c, t in self.local_due.items() if t <= now]
            try:
                due = set(await self.store.due_rooms(now)).union(mine)
            except RedisError:
                due = set(mine)
            for code in due:
                self.local_due.pop(code, None)
                self.metrics.timers.inc()
                self._fire(code)
            self._after_each()
            upcoming = min(self.local_due.values(), default=None)
            wait = poll if upcoming is None else max(0, min(poll, upcoming - self.clock.now_ms()))
            self._next_wake_ms = self.clock.now_ms() + max(wait, 1)
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(wait, 1) / 1000 / self.clock.speed)
