"""uvicorn's server with a quieter main loop.

uvicorn's ``Server.main_loop`` wakes ten times a second to refresh the ``Date`` header (once a
second) and to look for a shutdown request. On an idle process those wake-ups were half its CPU
(100 of 200 ms over 40 s, docs/benchmarks.md), and every idle process behind a load balancer pays
them. This loop wakes once a second for the header, and a shutdown signal wakes it at once.

Before uvicorn closes the sockets on a stop signal, the app's ``stopping`` hook runs: the other
processes learn at once that this one is going (app/processes/hub.py ``Hub.stopping``), so the players it
drops come back through them. Then its ``closing`` hook closes the game sockets itself, with a
reason that tells the phones how long to spread their return over (uvicorn's own close has none).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from types import FrameType

import uvicorn

TICK_S = 1.0
#: how long the app's own closing of its sockets may hold the shutdown up
CLOSING_S = 2.0
#: uvicorn refreshes the header when its tick counter is a multiple of 10 (ten 100 ms ticks)
TICKS_PER_WAKE = 10


class QuietServer(uvicorn.Server):
    _loop: asyncio.AbstractEventLoop | None = None
    _exit_requested: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._exit_requested = asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + TICKS_PER_WAKE) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exit_requested.wait(), TICK_S)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # before uvicorn closes the sockets: the players it drops must find the rooms moved
        stopping = getattr(self.config.app, "stopping", None)
        if callable(stopping):
            try:
                stopping()
            except Exception:  # the shutdown goes on whatever the app's hook did
                logging.getLogger("mercyless").exception("stopping hook failed")
        # and the app closes its game sockets its own way (a reason uvicorn's 1012 lacks) first,
        # with the listening sockets closed before (as uvicorn's shutdown begins): a phone told
        # to come back in a moment must not reach this process again while it finishes
        closing = getattr(self.config.app, "closing", None)
        if callable(closing):
            for server in getattr(self, "servers", []):
                server.close()
            try:
                await asyncio.wait_for(closing(), CLOSING_S)
            except Exception:
                logging.getLogger("mercyless").exception("closing hook failed")
        await super().shutdown(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # called from a signal handler: wake the loop through its thread-safe door
        if self._loop is not None and self._exit_requested is not None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                self._loop.call_soon_threadsafe(self._exit_requested.set)
