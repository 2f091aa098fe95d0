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
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

from engine import Action
from engine.ai.think import Thought, think

log = logging.getLogger("mercyless.bots")

WORKER_NICENESS = 19  # where there is no idle class: the server's own loop comes first
MIN_BUDGET_MS = 2.0  # a search always samples at least one world; this is what it aims for


def _start_worker(parent: int) -> None:
    """In each worker, first: Ctrl-C and SIGTERM ignored, a lower priority, and a watch on the
    server process. A Ctrl-C in a terminal (or a service manager's stop of the whole process
    group) reaches the server and its workers alike: the server shuts down
    gracefully and closes their pipes, and a worker that took it as its own KeyboardInterrupt
    died mid-search with a traceback. A server killed (SIGKILL, or a stop that did not finish)
    cannot shut its pool down, and its workers would go on with what was queued, then wait for
    ever: they leave once their parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (already so since its start: _Worker)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a service manager stopping the whole group
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


def _serve(conn: Connection, parent: int) -> None:
    """A worker: one job at a time from its pipe, its answer back the same way, until the pipe
    closes (read or written to)."""
    _start_worker(parent)
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer: tuple[bool, Any] = (True, fn(*args))
        except Exception as exc:  # the server decides on its loop instead
            answer = (False, repr(exc))
        try:
            conn.send(answer)
        except OSError:  # the server hung up mid-search (it is stopping): no one wants the answer
            return


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _stop_signals_set_aside() -> Iterator[None]:
    """While a worker is spawned, Ctrl-C and SIGTERM are ignored and held back in this process: a
    new interpreter keeps a signal it starts with ignored, so the worker ignores them from its
    first instruction, not only once its imports are done (about a second, in which a Ctrl-C to
    the group killed it with a traceback). Held back (blocked), one that comes meanwhile is not
    lost here: it is delivered to the server's own handler once that is back."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may
        yield
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    handlers = {signum: signal.signal(signum, signal.SIG_IGN) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


class _Worker:
    """A worker process and the server's end of its pipe, with the job it is making."""

    def __init__(self, parent: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_serve, args=(child, parent), name="mercyless-bot", daemon=True)
        with _stop_signals_set_aside():
            self.proc.start()
        child.close()
        self.job: asyncio.Future[Any] | None = None


# -- speed: the loop feeds the workers over their pipes, no executor threads (docs/performance.md) --
class BotPool:
    """Worker processes the event loop talks to directly: a job is pickled onto a worker's pipe
    and its answer read when the pipe is readable (``loop.add_reader``), one job per worker at a
    time, the rest queued here. No thread of this process takes part: a ``ProcessPoolExecutor``
    ran a manager and a feeder thread beside the loop, and on a busy machine the loop waited for
    the interpreter lock inside each submit (docs/performance.md)."""

    def __init__(self, workers: int, budget_ms: float) -> None:
        self.workers = workers
        self.full_budget_ms = budget_ms
        self.busy = 0  # searches handed over and not back yet (queued ones included)
        self._pool: list[_Worker] = []
        self._queue: deque[tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any]]] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None

    def budget_ms(self) -> float:
        """The budget of a search asked for now: the whole one while a worker is free."""
        share = self.workers / max(self.workers, self.busy + 1)
        return max(MIN_BUDGET_MS, self.full_budget_ms * share)

    def submit(self, thought: Thought) -> asyncio.Future[Action | None]:
        """The move ``thought`` asks for, made by a worker."""
        return self.call(think, thought)

    def call(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """``fn(*args)`` in a worker (both picklable by reference)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # first use (or a new loop in tests): workers for this one
            self.close()
            self._loop = loop
        done: asyncio.Future[Any] = loop.create_future()
        self._queue.append((fn, args, done))
        self.busy += 1
        done.add_done_callback(self._back)
        while len(self._pool) < self.workers:
            self._start()
        self._dispatch()
        return done

    def _back(self, _: object) -> None:
        self.busy -= 1

    def _start(self) -> None:
        worker = _Worker(os.getpid())
        self._pool.append(worker)
        assert self._loop is not None
        self._loop.add_reader(worker.conn.fileno(), self._answered, worker)

    def _dispatch(self) -> None:
        for worker in self._pool:
            while worker.job is None and self._queue:
                fn, args, done = self._queue.popleft()
                if done.done():  # cancelled while it waited
                    continue
                try:
                    worker.conn.send((fn, args))
                except (OSError, ValueError):
                    self._queue.appendleft((fn, args, done))
                    self._lost(worker)
                    return
                worker.job = done

    def _answered(self, worker: _Worker) -> None:
        try:
            ok, value = worker.conn.recv()
        except (EOFError, OSError):
            self._lost(worker)
            return
        done, worker.job = worker.job, None
        if done is not None and not done.done():
            if ok:
                done.set_result(value)
            else:
                done.set_exception(RuntimeError(f"bot search failed in its worker: {value}"))
        self._dispatch()

    def _lost(self, worker: _Worker) -> None:
        """A worker died: its job fails (its table decides on the loop) and another starts."""
        log.warning("a bot worker was lost; starting another")
        self._drop(worker)
        if worker.job is not None and not worker.job.done():
            worker.job.set_exception(RuntimeError("bot worker lost"))
        self._start()
        self._dispatch()

    def _drop(self, worker: _Worker) -> None:
        self._pool.remove(worker)
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(worker.conn.fileno())
        worker.conn.close()  # the worker reads the end of its pipe and leaves

    def close(self) -> None:
        for worker in list(self._pool):
            self._drop(worker)
            if worker.job is not None:
                worker.job.cancel()
            worker.proc.join(0.5)
            if worker.proc.is_alive():
                worker.proc.kill()
        while self._queue:
            self._queue.popleft()[2].cancel()
