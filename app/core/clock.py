"""The server's clock. Every deadline (turn, catch window, reconnect grace, bot think time) is
kept in this clock's milliseconds; ``speed`` > 1 makes tests run minute-long timers in
milliseconds without any test sleeping.

Deadlines are stored in the room document and read by every process (and by the process that
replaces a stopped one), so every clock of one ``speed`` must tell the same time: a fast clock
runs ``speed`` times faster from a fixed epoch (:data:`EPOCH_MS`), not from the moment it was
made. At ``speed`` 1 it is the wall clock.
"""

from __future__ import annotations

import asyncio
import time

#: The instant every clock of any speed agrees on (2024-01-01 00:00 UTC).
EPOCH_MS = 1_704_067_200_000


class Clock:
    def __init__(self, speed: float = 1.0) -> None:
        self.speed = speed
        wall = time.time() * 1000
        self._origin = EPOCH_MS + (wall - EPOCH_MS) * speed
        self._origin_mono = time.monotonic()

    def now_ms(self) -> int:
        """Epoch milliseconds: the wall clock run ``speed`` times faster since :data:`EPOCH_MS`."""
        elapsed = (time.monotonic() - self._origin_mono) * 1000 * self.speed
        return int(self._origin + elapsed)

    async def sleep_ms(self, ms: float) -> None:
        if ms > 0:
            await asyncio.sleep(ms / 1000 / self.speed)


class StepClock(Clock):
    """Time that moves only when told (``ms``): for benchmarks and tests that must play the
    same way every run."""

    def __init__(self, ms: int = 1_000_000) -> None:
        super().__init__()
        self.ms = ms

    def now_ms(self) -> int:
        return self.ms
