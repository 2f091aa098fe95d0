"""One WebSocket of one player: frames written as they are sent, a bounded backlog drained by a
writer task only while the socket's buffer is full (a slow reader never stalls its room), and
the last view sent to it (the base of its next patch). What a client may send is the gate's
(app/transport/gate.py)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
from collections import deque
from collections.abc import Coroutine
from typing import Any

from starlette.websockets import WebSocketState

from app.core.protocol import Close
from app.transport.asgi import RawSocket

log = logging.getLogger("mercyless.ws")
_ids = itertools.count(1)


class Connection:
    def __init__(self, ws: RawSocket, code: str, player: str, *, outbox_limit: int,
                 send_timeout_s: float) -> None:
        self.id = next(_ids)
        self.ws = ws
        self.code = code
        self.player = player
        self.view: dict[str, Any] | None = None  # None: the next message must be a welcome
        self.public: dict[str, Any] | None = None  # the public game ``view`` was built from
        self.version = 0
        # frames waiting behind a write the socket could not take at once (None: close after)
        self.outbox: deque[str | bytes | None] = deque()
        self.outbox_limit = outbox_limit
        self.send_timeout_s = send_timeout_s
        self.closed = False
        self.close_code: int | None = None
        self.close_reason = ""
        self.writer: asyncio.Task[None] | None = None  # runs while the socket's buffer is full
        self._sending_since: float | None = None  # loop time the last frame went out in a drain
        self._watch: asyncio.TimerHandle | None = None
        self._stalled = False
        self._closer: asyncio.Task[None] | None = None

    def send(self, text: str | bytes) -> None:
        """Write a frame (a str, or UTF-8 bytes) now if the socket takes it, else queue it
        behind the ones waiting; a reader too slow to keep up is dropped with 1013.

        Most writes go straight into the transport's buffer (``RawSocket.write_frames``, else
        by driving the server's send coroutine here): no writer task wakes for each of the ~5
        frames a move fans out to a seat. Only a write that must wait for the socket starts
        the writer."""
        if self.closed:
            return
        if self.writer is not None:
            if len(self.outbox) >= self.outbox_limit:
                log.warning("outbox full, dropping slow reader", extra={"room": self.code})
                self.close(Close.TRY_AGAIN_LATER)
                return
            self.outbox.append(text)
            return
        try:
            if self.ws.write_frames((text,)):
                return
        except Exception as exc:  # the write itself failed: the socket is gone
            self._write_failed(exc)
            return
        sending = self.ws.send_text(text)
        try:
            waiting = sending.send(None)
        except StopIteration:
            return
        except Exception as exc:  # a closed socket raises several types; none may escape
            self._failed(type(exc).__name__)
            return
        loop = asyncio.get_running_loop()
        self._sending_since = loop.time()
        self._watch = loop.call_later(self.send_timeout_s, self._check_stall)
        writer = self.writer = asyncio.create_task(self._drain(sending, waiting))
        writer.add_done_callback(functools.partial(self._writer_done, sending))

    def send_frames(self, texts: list[str | bytes]) -> None:
        """Send ``texts`` in order, in one write to the socket when it takes them at once."""
        if self.closed:
            return
        try:
            if self.writer is None and self.ws.write_frames(texts):
                return
        except Exception as exc:  # the write itself failed: as Connection.send treats it
            self._write_failed(exc)
            return
        for text in texts:
            self.send(text)

    def close(self, code: int = Close.NORMAL, reason: str = "") -> None:
        """Close with ``code`` (and ``reason``) once the frames already accepted have gone out."""
        if self.closed:
            return
        self.closed = True
        self.close_code = code
        self.close_reason = reason
        if self.writer is None:
            self._start_closing()
        elif len(self.outbox) < self.outbox_limit:
            self.outbox.append(None)
        else:  # a full backlog is not worth waiting for: close right away
            self.writer.cancel()
            self._start_closing()

    async def wait_closed(self) -> None:
        """Until the last frames and the close frame have gone out (or could not)."""
        while pending := [t for t in (self.writer, self._closer) if t is not None and not t.done()]:
            await asyncio.wait(pending)

    def _write_failed(self, exc: Exception) -> None:
        """A direct write raised: a closed transport's errors are routine, anything else (the
        server's protocol changed under ``RawSocket.write_frames``, say) is logged in full."""
        if not isinstance(exc, OSError | RuntimeError):
            log.warning("direct write failed", exc_info=exc, extra={"room": self.code})
        self._failed(type(exc).__name__)

    def _failed(self, why: str) -> None:
        log.info("send failed: %s", why, extra={"room": self.code})
        self.closed = True
        self._start_closing()

    def _start_closing(self) -> None:
        if self._closer is None:
            self._closer = asyncio.create_task(self._close_socket(self.close_code or Close.NORMAL,
                                                                  self.close_reason))

    async def _close_socket(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            if self.ws.application_state != WebSocketState.DISCONNECTED:
                await self.ws.close(code, reason) if reason else await self.ws.close(code)

    async def _drain(self, sending: Coroutine[Any, Any, None], waiting: Any) -> None:
        """Finish the write that had to wait, then the frames queued behind it, in order. A
        socket on which no frame goes out for send_timeout_s (a reader that stopped reading)
        is dropped: one timer watches the whole drain."""
        loop = asyncio.get_running_loop()
        try:
            await _finish(sending, waiting)
            while self.outbox:
                self._sending_since = loop.time()
                text = self.outbox.popleft()
                if text is None:  # close() was called behind these frames
                    self._start_closing()
                    break
                await self.ws.send_text(text)
        except asyncio.CancelledError:
            if self._stalled:
                self._failed("stalled reader")
        except Exception as exc:  # a closed socket raises several types; none may escape
            self._failed(type(exc).__name__)
        finally:
            # at once, not in a done callback: a frame sent in between would queue behind a
            # writer that has finished
            self._drained(sending)

    def _writer_done(self, sending: Coroutine[Any, Any, None], writer: asyncio.Task[None]) -> None:
        if self.writer is writer:  # cancelled before it first ran (a forced close)
            self._drained(sending)

    def _drained(self, sending: Coroutine[Any, Any, None]) -> None:
        sending.close()  # a no-op once it has finished
        self._sending_since = None
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        self.outbox.clear()
        self.writer = None

    def _check_stall(self) -> None:
        self._watch = None
        since = self._sending_since
        if since is None:  # the drain finished (it is set exactly while a writer runs)
            return
        loop = asyncio.get_running_loop()
        left = since + self.send_timeout_s - loop.time()
        if left > 0:
            self._watch = loop.call_later(left, self._check_stall)
            return
        self._stalled = True
        self.writer.cancel()


async def _finish(coro: Coroutine[Any, Any, None], waiting: Any) -> None:
    """Run ``coro`` on from where it first suspended (``waiting``: what it yielded there), as
    a task running it would: wait for the yielded future, then resume the coroutine, which
    reads the future's outcome itself. Cancelling this cancels nothing else."""
    while True:
        if waiting is None:  # a bare yield: run again on the next loop iteration
            await asyncio.sleep(0)
        elif asyncio.isfuture(waiting):
            await asyncio.wait([waiting])
        else:
            coro.close()
            raise RuntimeError(f"a send yielded {waiting!r}")
        try:
            waiting = coro.send(None)
        except StopIteration:
            return
