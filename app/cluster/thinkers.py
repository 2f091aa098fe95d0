"""The process's bot workers: the searches of ``hard`` bots made in other processes, so no room
of this one waits while a bot thinks (docs/server.md "Bots off the loop").

A search is handed over as an ``engine.ai.think.Thought`` (the seat's view and its bot's memory:
nothing its seat may not know) and comes back as an action. When more searches are asked for
than the workers can make at once, each new one gets a smaller budget (the budget divided by
the searches per worker, queued ones included), so under load bots think less, and the tables
never wait for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from engine import Action
from engine.ai.think import Thought, think

log = logging.getLogger("mercyless.bots")

WORKER_NICENESS = 19  # where there is no idle class: the server's own loop comes first
MIN_BUDGET_MS = 2.0  # a search always samples at least one world; this is what it aims for


def _start_worker(parent: int) -> None:
    """In each worker, first: a lower priority, and a watch on the server process. A server
    killed (SIGKILL, or a stop that did not finish) cannot shut its pool down, and its workers
    would go on with what was queued, then wait for ever: they leave once their parent is gone."""
    try:
        # idle class: a search only gets the cores no table wants; its budget is wall time, so
        # on a busy machine a bot simply samples fewer worlds
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):  # not Linux: the lowest plain priority
        with contextlib.suppress(OSError, AttributeError):
            os.nice(WORKER_NICENESS)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class BotPool:
    def __init__(self, workers: int, budget_ms: float) -> None:
        self.workers = workers
        self.full_budget_ms = budget_ms
        self.busy = 0  # searches handed over and not back yet
        self._pool: ProcessPoolExecutor | None = None

    def budget_ms(self) -> float:
        """The budget of a search asked for now: the whole one while a worker is free."""
        share = self.workers / max(self.workers, self.busy + 1)
        return max(MIN_BUDGET_MS, self.full_budget_ms * share)

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawned, not forked: the server has threads (the embedded store's writer), and a
            # fork would copy their locks as they stand
            self._pool = ProcessPoolExecutor(self.workers, multiprocessing.get_context("spawn"),
                                             initializer=_start_worker, initargs=(os.getpid(),))
        return self._pool

    def submit(self, thought: Thought) -> asyncio.Future[Action | None]:
        """The move ``thought`` asks for, made by a worker."""
        try:
            job: Future[Action | None] = self._executor().submit(think, thought)
        except (BrokenProcessPool, RuntimeError):  # a worker died: a new pool for what follows
            log.warning("bot workers lost; starting new ones")
            self._pool = None
            job = self._executor().submit(think, thought)
        self.busy += 1
        done = asyncio.wrap_future(job)
        done.add_done_callback(self._back)
        return done

    def _back(self, _: object) -> None:
        self.busy -= 1

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
