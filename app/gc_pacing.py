"""The cyclic garbage collector, paced by the event loop instead of by allocation counts.

Why: CPython starts a young collection when allocations outnumber deallocations by 700. Under
play they nearly balance (each commit frees the state it replaces), so the count seldom gets
there while the young generation grows to ~20k objects a second at 1,000 actions/s; then a
burst of allocations (the history writer parsing finished rounds, a wave of connections) trips
the count, and walking that generation stops every room of the process for 10-20 ms. That was
the paced benchmark's p99 (docs/benchmarks.md, session 12: measured with ``gc.callbacks``).

Here the loop collects between its callbacks, as often as it takes to keep each walk near
``PAUSE_TARGET_S``: every ``MIN_WAIT_S`` under load, backing off to ``MAX_WAIT_S`` while the
process is idle (each wake-up costs an idle process CPU). A full collection comes only when the
memory in use has grown by a quarter since the last one (CPython's own rule, of the objects that
reached the old generation): so they come while players arrive, not in steady play, where each
would pause the process ~100 ms over 1,000 players; and once when the process goes idle after
busy time, so what that left behind is freed for the next players.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import sys
import time
from collections.abc import AsyncIterator

log = logging.getLogger("mercyless.gc")

MIN_WAIT_S = 0.020
MAX_WAIT_S = 1.0
#: A collection this long or longer keeps the pace at its quickest; shorter ones lengthen it.
PAUSE_TARGET_S = 0.0005
#: Growth of the memory in use (pymalloc's blocks), over what was in use after the last full
#: collection, that calls the next one.
FULL_GROWTH = 0.25

_running = 0  # pacers running in this process (the collector is one per process)


class CollectorPacer:
    """Runs the collections itself (:meth:`run`; :func:`paced_collector` turns automatic
    collection off meanwhile).

    Each beat collects the young and middle generations together: what survives one beat (a
    room's state until its next action, a connection) goes to the old generation, where it is
    freed by its reference count like nearly everything here, and is walked again only by a
    full collection. Collecting the middle generation every tenth beat instead, as CPython
    would, walked those survivors up to ten times and took twice the collector's CPU."""

    def __init__(self) -> None:
        self.beats = 0
        self.full = 0
        self.longest_pause_s = 0.0
        self._blocks_after_full = sys.getallocatedblocks()
        self._busy_since_full = False

    def beat(self, wait_s: float) -> float:
        """One collection now; returns how long to wait before the next."""
        self.beats += 1
        # (CPython's rule for full collections is the same quarter, of the objects that reached
        # the old generation; the blocks in use are its stand-in that costs nothing to read).
        # And once the process has gone idle after being busy: the cycles that busy time left
        # in the old generation (closed sockets, finished tasks) are freed for the next players
        # while the pause costs nobody anything
        idle = wait_s >= MAX_WAIT_S
        full = ((idle and self._busy_since_full)
                or sys.getallocatedblocks() > self._blocks_after_full * (1 + FULL_GROWTH))
        start = time.perf_counter()
        gc.collect(2 if full else 1)
        pause = time.perf_counter() - start
        self.longest_pause_s = max(self.longest_pause_s, pause)
        if full:
            self.full += 1
            self._blocks_after_full = sys.getallocatedblocks()
            self._busy_since_full = False
            return wait_s
        if pause >= PAUSE_TARGET_S:
            self._busy_since_full = True
            return MIN_WAIT_S
        return min(wait_s * 2, MAX_WAIT_S)

    async def run(self) -> None:
        wait_s = MIN_WAIT_S
        while True:
            await asyncio.sleep(wait_s)
            wait_s = self.beat(wait_s)


@contextlib.asynccontextmanager
async def paced_collector(enabled: bool) -> AsyncIterator[CollectorPacer | None]:
    """While inside, a :class:`CollectorPacer` runs on this loop (``enabled``); on the way out
    CPython collects on its own again."""
    global _running
    if not enabled:
        yield None
        return
    pacer = CollectorPacer()
    _running += 1
    gc.disable()
    task = asyncio.create_task(pacer.run(), name="gc-pacer")
    try:
        yield pacer
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        _running -= 1
        if not _running:  # (the last of several apps in one process, as in the tests)
            gc.enable()
        log.debug("collector pacing stopped", extra={"beats": pacer.beats, "full": pacer.full})
