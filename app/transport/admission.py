"""Backpressure on new sockets: a bounded queue in front of the work a socket costs before its
welcome.

A restart, a rolling deploy or a network's return brings every phone back at once: ten thousand
sockets within seconds. Each asks Redis before it is accepted (is its address blocked? where is
its room's home?) and its hello loads and commits its room. Let through all at once, they wait
together on the Redis pool (REDIS_MAX_CONNECTIONS), past its timeout ("No connection available"),
and the rooms already playing and the history writer wait behind them; handshakes time out at
random, and the clients that retry at once make it worse. Here at most ``HELLOS_AT_ONCE``
sockets do that work at a time, the others wait their turn in arrival order, and once
``HELLO_QUEUE`` are waiting a newcomer is told to come back later: close 1013 (Try Again
Later) with a ``{"retry_ms": N}`` reason, N from how fast the queue is going down. The browser
client waits at least that long, with jitter (web/js/net.js), so the crowd comes back spread out.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

log = logging.getLogger("mercyless.ws")

#: a busy server's hint is at least this and at most that (ms)
RETRY_MIN_MS = 1_000
RETRY_MAX_MS = 30_000
#: a refusal is logged at most this often (s), with the count since the last line
LOG_EVERY_S = 10.0
#: refusals remembered for the hint (a flood past it only makes the hint the longest)
REFUSALS_KEPT = 100_000


class Busy(Exception):
    """The queue is full: come back in ``retry_ms``."""

    def __init__(self, retry_ms: int) -> None:
        super().__init__(f"busy: retry in {retry_ms} ms")
        self.retry_ms = retry_ms

    def reason(self) -> str:
        """The close reason the client reads."""
        return spread_reason(self.retry_ms)


def spread_reason(retry_ms: int) -> str:
    """A close reason that asks the client to come back spread over ``retry_ms`` (a WebSocket
    close reason is at most 123 bytes)."""
    return f'{{"retry_ms":{retry_ms}}}'


def restart_spread_ms(sockets: int, welcomes_per_s: float) -> int:
    """Over how long a stopping process's ``sockets`` should come back: as long as a process
    takes to welcome them all at ``welcomes_per_s``, within RETRY_MIN_MS..RETRY_MAX_MS."""
    wait = 1000 * sockets / welcomes_per_s if welcomes_per_s > 0 else RETRY_MIN_MS
    return round(min(RETRY_MAX_MS, max(RETRY_MIN_MS, wait)))


class Admission:
    """At most ``at_once`` sockets in their pre-welcome work, at most ``queue`` waiting for a
    turn (0: no bound for either); ``per_s`` is the pace the hint assumes until turns have
    been timed (WELCOMES_PER_S)."""

    def __init__(self, at_once: int, queue: int, clock: Callable[[], float] = time.monotonic,
                 per_s: float = 500.0) -> None:
        self.per_s = per_s
        self._slots = asyncio.Semaphore(at_once) if at_once > 0 else None
        self.queue = queue
        self.waiting = 0
        self.refused = 0
        self._clock = clock
        self._finished: deque[float] = deque(maxlen=256)  # when the last turns ended
        self._refusals: deque[float] = deque(maxlen=REFUSALS_KEPT)  # when sockets were told to retry
        self._unlogged = 0
        self._logged_at = -LOG_EVERY_S

    @asynccontextmanager
    async def turn(self, last: bool = True) -> AsyncIterator[None]:
        """A turn, after those who came first; raises :class:`Busy` at once when the queue is
        full. ``last``: the socket's last turn before its welcome (the pace the hint reads is
        of those)."""
        if self._slots is None:
            yield
            return
        if self.queue > 0 and self.waiting >= self.queue:
            raise self._busy()
        self.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            self._slots.release()
            if last:
                self._finished.append(self._clock())

    def retry_ms(self) -> int:
        """How long the backlog takes to go down at the pace the last turns ended, within
        RETRY_MIN_MS..RETRY_MAX_MS: the sockets waiting, and those told to retry in the last
        RETRY_MAX_MS (they are coming back), so that a crowd told to retry comes back spread
        over longer and longer, not all in the next second."""
        done = self._finished
        refusals = self._refusals
        now = self._clock()
        while refusals and refusals[0] < now - RETRY_MAX_MS / 1000:
            refusals.popleft()
        per_s = self.per_s  # (a process just started: what the setting says)
        if len(done) >= 2 and done[-1] > done[0]:
            per_s = (len(done) - 1) / (done[-1] - done[0])
        wait = 1000 * (self.waiting + len(refusals)) / per_s
        return round(min(RETRY_MAX_MS, max(RETRY_MIN_MS, wait)))

    def _busy(self) -> Busy:
        self.refused += 1
        self._unlogged += 1
        now = self._clock()
        self._refusals.append(now)  # (this one too is coming back)
        busy = Busy(self.retry_ms())
        if now - self._logged_at >= LOG_EVERY_S:
            log.warning("new sockets past HELLO_QUEUE=%d: %d told to retry (in %d ms) since the last "
                        "such line",
                        self.queue, self._unlogged, busy.retry_ms,
                        extra={"waiting": self.waiting, "refused": self.refused})
            self._logged_at = now
            self._unlogged = 0
        return busy
