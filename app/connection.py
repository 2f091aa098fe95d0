"""One WebSocket of one player: an outbound queue drained by its own writer task (a slow
reader never stalls its room), a token-bucket rate limit, and the last view sent to it (the
base of its next patch)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import Any

from starlette.websockets import WebSocket, WebSocketState

from .protocol import Close

log = logging.getLogger("mercyless.ws")
_ids = itertools.count(1)


class TokenBucket:
    def __init__(self, burst: int, per_s: float) -> None:
        self.capacity = float(burst)
        self.tokens = float(burst)
        self.rate = per_s
        self.stamp = asyncio.get_running_loop().time()

    def take(self) -> bool:
        now = asyncio.get_running_loop().time()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Connection:
    def __init__(self, ws: WebSocket, code: str, player: str, *, outbox_limit: int, burst: int,
                 per_s: float, send_timeout_s: float) -> None:
        self.id = next(_ids)
        self.ws = ws
        self.code = code
        self.player = player
        self.view: dict[str, Any] | None = None  # None: the next message must be a welcome
        self.version = 0
        self.bucket = TokenBucket(burst, per_s)
        self.outbox: asyncio.Queue[str | None] = asyncio.Queue(outbox_limit)
        self.send_timeout_s = send_timeout_s
        self.closed = False
        self.close_code: int | None = None
        self._sending_since: float | None = None  # loop time the batch being sent began
        self._watch: asyncio.TimerHandle | None = None
        self._stalled = False
        self.writer = asyncio.create_task(self._write())
        self._closer: asyncio.Task[None] | None = None

    def send(self, text: str) -> None:
        """Queue a frame; a reader too slow to keep up is dropped with 1013."""
        if self.closed:
            return
        try:
            self.outbox.put_nowait(text)
        except asyncio.QueueFull:
            log.warning("outbox full, dropping slow reader", extra={"room": self.code})
            self.close(Close.TRY_AGAIN_LATER)

    def close(self, code: int = Close.NORMAL) -> None:
        if self.closed:
            return
        self.closed = True
        self.close_code = code
        with contextlib.suppress(asyncio.QueueFull):
            self.outbox.put_nowait(None)
        if self.outbox.full():  # no room for the sentinel: close right away
            self.writer.cancel()
            self._closer = asyncio.create_task(self._close_socket(code))

    async def _close_socket(self, code: int) -> None:
        with contextlib.suppress(Exception):
            if self.ws.application_state != WebSocketState.DISCONNECTED:
                await self.ws.close(code)

    async def _write(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            outbox = self.outbox
            text = await outbox.get()
            while text is not None:
                # a batch that cannot be written within send_timeout_s (the socket's buffer is
                # full: a reader that stopped reading) drops the socket; one timer watches the
                # batches of a whole timeout (a timeout around each batch cost ~4% of the
                # server's CPU: a move fans out ~5 frames a seat)
                self._sending_since = loop.time()
                if self._watch is None:
                    self._watch = loop.call_later(self.send_timeout_s, self._check_stall)
                while text is not None:
                    await self.ws.send_text(text)
                    if outbox.empty():
                        break
                    text = outbox.get_nowait()
                self._sending_since = None
                if text is None:
                    break
                text = await outbox.get()
        except (RuntimeError, OSError) as exc:
            log.info("send failed: %s", type(exc).__name__, extra={"room": self.code})
            self.closed = True
        except asyncio.CancelledError:
            if not self._stalled:
                return
            log.info("send failed: stalled reader", extra={"room": self.code})
            self.closed = True
        except Exception:  # a closed socket raises several types; none may escape
            self.closed = True
        finally:
            if self._watch is not None:
                self._watch.cancel()
                self._watch = None
        await self._close_socket(self.close_code or Close.NORMAL)

    def _check_stall(self) -> None:
        self._watch = None
        since = self._sending_since
        if since is None:  # idle now: the next batch arms a new check
            return
        loop = asyncio.get_running_loop()
        left = since + self.send_timeout_s - loop.time()
        if left > 0:
            self._watch = loop.call_later(left, self._check_stall)
            return
        self._stalled = True
        self.writer.cancel()
