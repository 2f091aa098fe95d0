"""The cyclic garbage collector, paced by the event loop instead of by allocation counts.

Why: CPython starts a young collection when allocations outnumber deallocations by 700. Under
play they nearly balance (each commit frees the state it replaces), so the count seldom gets
there while the young generation grows to ~20k objects a second at 1,000 actions/s; then a
burst of allocations (the history writer parsing finished rounds, a wave of connections) trips
the count, and walking that generation stops every room of the process for 10-20 ms. That was
the paced benchmark's p99 (docs/benchmarks.md "Paced tail", measured with ``gc.callbacks``).

Here the loop collects between its callbacks, as often as it takes to keep each walk near
``PAUSE_TARGET_S``: every ``MIN_WAIT_S`` under load, backing off to ``MAX_WAIT_S`` while the
process is idle (each wake-up costs an idle process CPU). A full collection, which pauses the
process ~100 ms over 1,000 players, comes when the memory in use has grown by a quarter since
the last one (after CPython's own rule; mostly while players arrive), at least every ten
minutes, and once when the process goes idle after busy time, so what that time left behind
is freed for the next players. Garbage in the old generation is bounded by that quarter: on a
fresh server ~5,600 closed connections (~16 MB) before the growth calls a collection.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import sys
import time
from collections.abc import AsyncIterator, Callable

log = logging.getLogger("mercyless.gc")

MIN_WAIT_S = 0.020
MAX_WAIT_S = 1.0
#: A collection this long or longer keeps the pace at its quickest; shorter ones lengthen it.
PAUSE_TARGET_S = 0.0005
#: Growth of the memory in use (pymalloc's blocks), over what was in use after the last full
#: collection, that calls the next one; looked at every ``GROWTH_CHECK_EVERY`` beats (reading
#: the count walks pymalloc's arenas: ~40 us over 1.5M blocks).
FULL_GROWTH = 0.25
GROWTH_CHECK_EVERY = 10
#: A full collection at least this often whatever the growth: a backstop for a process whose
#: blocks cannot be counted (``PYTHONMALLOC=malloc`` reads 0) or whose garbage grows slower
#: than its live memory did.
FULL_AT_LEAST_EVERY_S = 600.0

_running = 0  # pacers running in this process (the collector is one per process)
_was_enabled = True  # automatic collection before the first of them started


class CollectorPacer:
    """Runs the collections itself (:meth:`run`; :func:`paced_collector` turns automatic
    collection off meanwhile).

    Each beat collects the young and middle generations together: what survives one beat (a
    room's state until its next action, a connection) goes to the old generation, where it is
    freed by its reference count like nearly everything here, and is walked again only by a
    full collection. Collecting the middle generation every tenth beat instead, as CPython
    would, walked those survivors up to ten times and took twice the collector's CPU.

    Written for CPython 3.11's generational collector (the one this project ships with): from
    3.14 ``gc.collect(1)`` means the young generation and a slice of the old one."""

    def __init__(self, now_s: float | None = None,
                 observe: Callable[[int, float], None] | None = None,
                 late: Callable[[float], None] | None = None) -> None:
        self.beats = 0
        self._observe = observe  # (generation, pause in seconds) of every collection
        # how much later than asked the loop woke each beat: what any room's next step waited
        # on the callbacks before it (the loop's lag, read for free from a wake-up made anyway)
        self._late = late
        self.full_collections = 0
        self._mark_full(time.monotonic() if now_s is None else now_s)

    def beat(self, wait_s: float, now_s: float | None = None) -> float:
        """One collection now (``wait_s`` after the last); returns how long to wait for the
        next."""
        now_s = time.monotonic() if now_s is None else now_s
        self.beats += 1
        # the memory in use grew by a quarter (CPython's rule is the same quarter, counted in
        # objects that reached the old generation, frozen ones left out: this one is looser),
        # or the backstop's time has come
        due = now_s - self._full_at_s >= FULL_AT_LEAST_EVERY_S or (
            self.beats % GROWTH_CHECK_EVERY == 0
            and sys.getallocatedblocks() > self._blocks_after_full * (1 + FULL_GROWTH))
        if due:
            self._collect_full(now_s)
            return wait_s
        pause = self._collect(1)
        if pause >= PAUSE_TARGET_S:
            self._busy_since_full = True
            return MIN_WAIT_S
        if wait_s >= MAX_WAIT_S and self._busy_since_full:
            # a whole second's garbage made a short collection: the process went idle after busy
            # time. What that time left in the old generation (closed sockets, finished tasks)
            # is freed now for the next players, while the pause costs nobody anything
            self._collect_full(now_s)
        return min(wait_s * 2, MAX_WAIT_S)

    def _collect(self, generation: int) -> float:
        """Collect ``generation`` and the younger ones; returns how long it took."""
        start = time.perf_counter()
        gc.collect(generation)
        pause = time.perf_counter() - start
        if self._observe is not None:
            self._observe(generation, pause)
        return pause

    def _collect_full(self, now_s: float) -> None:
        self._collect(2)
        self.full_collections += 1
        self._mark_full(now_s)

    def _mark_full(self, now_s: float) -> None:
        """What the next full collection is measured from: now, and the memory now in use."""
        self._full_at_s = now_s
        self._blocks_after_full = sys.getallocatedblocks()
        self._busy_since_full = False

    async def run(self) -> None:
        wait_s = MIN_WAIT_S
        while True:
            asked_at = time.perf_counter()
            await asyncio.sleep(wait_s)
            if self._late is not None:
                self._late(max(0.0, time.perf_counter() - asked_at - wait_s))
            try:
                wait_s = self.beat(wait_s)
            except Exception:  # the collector must not stay off for good because one beat failed
                log.exception("garbage collection failed; trying again")
                wait_s = MAX_WAIT_S


def idle_collection_within_s() -> float:
    """How long after its last busy beat a process that went idle has had its full collection:
    the waits doubling from ``MIN_WAIT_S`` up to ``MAX_WAIT_S``, then one at the ceiling."""
    total, wait_s = 0.0, MIN_WAIT_S
    while wait_s < MAX_WAIT_S:
        total += wait_s
        wait_s = min(wait_s * 2, MAX_WAIT_S)
    return total + MAX_WAIT_S


@contextlib.asynccontextmanager
async def paced_collector(enabled: bool, observe: Callable[[int, float], None] | None = None,
                          late: Callable[[float], None] | None = None,
                          ) -> AsyncIterator[CollectorPacer | None]:
    """While inside, a :class:`CollectorPacer` runs on this loop (``enabled``), telling
    ``observe`` of each collection and ``late`` of each wake-up's lateness; on the way out the
    collector is left as the first of these found it."""
    global _running, _was_enabled
    if not enabled:
        yield None
        return
    pacer = CollectorPacer(observe=observe, late=late)
    if not _running:
        _was_enabled = gc.isenabled()
    _running += 1
    try:
        gc.disable()
        task = asyncio.create_task(pacer.run(), name="gc-pacer")
        try:
            yield pacer
        finally:
            task.cancel()
            await asyncio.wait([task])  # (a cancellation of this caller still reaches it)
    finally:
        _running -= 1
        if not _running and _was_enabled:  # (the last of several apps in one process, as in the tests)
            gc.enable()
        log.debug("collector pacing stopped",
                  extra={"beats": pacer.beats, "full_collections": pacer.full_collections})
