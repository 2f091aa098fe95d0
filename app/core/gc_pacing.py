"""The cyclic garbage collector, paced by the event loop instead of by allocation counts.

Why: CPython starts a young collection when allocations outnumber deallocations by 700. Under
play they nearly balance (each commit frees the state it replaces), so the count seldom gets
there while the young generation grows to ~20k objects a second at 1,000 actions/s; then a
burst of allocations (the history writer parsing finished rounds, a wave of connections) trips
the count, and walking that generation stops every room of the process for 10-20 ms. That was
the paced benchmark's p99 (docs/benchmarks.md "Paced tail", measured with ``gc.callbacks``).

Here the loop collects between its callbacks, as often as it takes to keep each walk near
``PAUSE_TARGET_S``: every ``MIN_WAIT_S`` under load, backing off to ``MAX_WAIT_S`` while the
process is idle (each wake-up costs an idle process CPU). What survives a beat is frozen
(``gc.freeze``): the players' sockets, views and rooms are freed by their reference counts like
nearly everything here, and no later collection walks them while they live. A full collection
walks everything: over 2,000 rooms (~1.1M tracked objects, ~120 a socket) it stopped every room
of the process for 0.4-1.4 s, and CPython's rule (and this module's before) made one each time
the memory in use grew by a quarter: the first deals after a crowd arrived, say, in the middle
of play (docs/benchmarks.md "A full collection in the middle of play").

So a full collection, which frees cyclic garbage among the frozen (a socket alive at a beat that
closed later: ~6-9k objects over a crowd's arrival and first deals), comes only:
- once when the process goes idle after busy time, so what that time left behind is freed for
  the next players while the pause costs nobody;
- when the memory in use has doubled (``FULL_GROWTH``) since the last one, which bounds that
  garbage by the live set, but, if it would pause the rooms longer than ``FULL_PAUSE_OK_S``
  (estimated from the last one), no sooner than ``FULL_AT_MOST_EVERY_S`` after it: a crowd's
  arrival and its first deals double the memory with live objects, not garbage;
- every ``FULL_AT_LEAST_EVERY_S`` in a process whose memory in use cannot be counted
  (``PYTHONMALLOC=malloc`` reads 0), as a backstop.
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
#: Growth of the memory in use (pymalloc's blocks) over what was in use after the last full
#: collection that calls the next; read every ``GROWTH_CHECK_EVERY`` beats (reading the count
#: walks pymalloc's arenas: ~0.1 ms over 1.5M blocks). Not the frozen set's size: counting it
#: walks a list of every frozen object, 20-100 ms over a million.
FULL_GROWTH = 1.0
GROWTH_CHECK_EVERY = 10
#: A full collection called by growth that would pause the rooms longer than this waits until
#: ``FULL_AT_MOST_EVERY_S`` after the last one.
FULL_PAUSE_OK_S = 0.05
FULL_AT_MOST_EVERY_S = 600.0
#: The backstop's period, in a process whose memory in use cannot be counted.
FULL_AT_LEAST_EVERY_S = 600.0

_running = 0  # pacers running in this process (the collector is one per process)
_was_enabled = True  # automatic collection before the first of them started


class CollectorPacer:
    """Runs the collections itself (:meth:`run`; :func:`paced_collector` turns automatic
    collection off meanwhile).

    Each beat collects the young and middle generations together and freezes what survived, so
    the next beat walks only what was made since. Collecting the middle generation every tenth
    beat instead, as CPython would, walked those survivors up to ten times and took twice the
    collector's CPU.

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
        self._seconds_per_block = 0.0  # what the last full collection took, per block in use
        self._uncountable = not sys.getallocatedblocks()
        self._mark_full(time.monotonic() if now_s is None else now_s)

    def beat(self, wait_s: float, now_s: float | None = None) -> float:
        """One collection now (``wait_s`` after the last); returns how long to wait for the
        next."""
        now_s = time.monotonic() if now_s is None else now_s
        self.beats += 1
        if self._full_due(now_s):
            self._collect_full(now_s)
            return wait_s
        pause = self._collect(1)
        gc.freeze()
        if pause >= PAUSE_TARGET_S:
            self._busy_since_full = True
            return MIN_WAIT_S
        if wait_s >= MAX_WAIT_S and self._busy_since_full:
            # a whole second's garbage made a short collection: the process went idle after busy
            # time. What that time left among the frozen (closed sockets, finished tasks) is freed
            # now for the next players, while the pause costs nobody anything
            self._collect_full(now_s)
        return min(wait_s * 2, MAX_WAIT_S)

    def _full_due(self, now_s: float) -> bool:
        since_full_s = now_s - self._full_at_s
        if self._uncountable:  # (no blocks to count: the backstop alone)
            return since_full_s >= FULL_AT_LEAST_EVERY_S
        if self.beats % GROWTH_CHECK_EVERY:
            return False
        blocks = sys.getallocatedblocks()
        if blocks < self._blocks_after_full * (1 + FULL_GROWTH):
            return False
        return blocks * self._seconds_per_block <= FULL_PAUSE_OK_S or since_full_s >= FULL_AT_MOST_EVERY_S

    def _collect(self, generation: int) -> float:
        """Collect ``generation`` and the younger ones; returns how long it took."""
        start = time.perf_counter()
        gc.collect(generation)
        pause = time.perf_counter() - start
        if self._observe is not None:
            self._observe(generation, pause)
        return pause

    def _collect_full(self, now_s: float) -> None:
        """Walk everything, the frozen too, and freeze what survived."""
        blocks = sys.getallocatedblocks()
        gc.unfreeze()
        pause = self._collect(2)
        gc.freeze()
        self._seconds_per_block = pause / max(1, blocks)
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
    collector is left as the first of these found it, with nothing frozen: what the beats froze
    is the stopping app's, and its cycles are garbage for the next full collection to find."""
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
        if not _running:  # (the last of several apps in one process, as in the tests)
            gc.unfreeze()
            if _was_enabled:
                gc.enable()
        log.debug("collector pacing stopped",
                  extra={"beats": pacer.beats, "full_collections": pacer.full_collections})
