"""The server's clock. Every deadline (turn, catch window, reconnect grace, bot think time) is
kept in this clock's milliseconds; ``speed`` > 1 makes tests run minute-long timers in
milliseconds without any test sleeping."""

from __future__ import annotations

import asyncio
import time


class Clock:
    def __init__(self, speed: float = 1.0) -> None:
        self.speed = speed
        self._origin_wall = time.time() * 1000
        self._origin_mono = time.monotonic()

    def now_ms(self) -> int:
        """Epoch milliseconds (scaled by ``speed`` from the moment the clock was made)."""
        elapsed = (time.monotonic() - self._origin_mono) * 1000 * self.speed
        return int(self._origin_wall + elapsed)

    async def sleep_ms(self, ms: float) -> None:
        if ms > 0:
            await asyncio.sleep(ms / 1000 / self.speed)
