"""app.connection: the writer drops a socket whose frames cannot be written in time, and only
that one."""

from __future__ import annotations

import asyncio

from starlette.websockets import WebSocketState

from app.connection import Connection


class FakeSocket:
    """A socket whose writes finish only when ``writable`` is set (a full send buffer)."""

    def __init__(self, writable: bool) -> None:
        self.application_state = WebSocketState.CONNECTED
        self.writable = asyncio.Event()
        if writable:
            self.writable.set()
        self.sent: list[str] = []
        self.closed_with: int | None = None
        self.arrived = asyncio.Condition()

    async def send_text(self, text: str) -> None:
        await self.writable.wait()
        self.sent.append(text)
        async with self.arrived:
            self.arrived.notify_all()

    async def until_sent(self, count: int) -> None:
        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(lambda: len(self.sent) >= count), 5)

    async def close(self, code: int) -> None:
        self.closed_with = code
        self.application_state = WebSocketState.DISCONNECTED


def _connection(ws: FakeSocket, timeout_s: float) -> Connection:
    return Connection(ws, "ROOM", "p1", outbox_limit=16, burst=20, per_s=5, send_timeout_s=timeout_s)  # type: ignore[arg-type]


async def test_a_write_that_cannot_finish_in_time_drops_the_socket():
    ws = FakeSocket(writable=False)
    conn = _connection(ws, 0.05)
    conn.send("a frame the reader never takes")
    done, _ = await asyncio.wait({conn.writer}, timeout=5)  # asyncio.wait cancels nothing
    assert conn.writer in done and conn._stalled
    assert conn.closed and ws.closed_with == 1000 and ws.sent == []


async def test_a_socket_that_keeps_up_is_never_dropped_however_long_it_idles():
    ws = FakeSocket(writable=True)
    conn = _connection(ws, 30)
    for i in range(3):
        conn.send(f"frame {i}")
    await ws.until_sent(3)
    assert conn._watch is not None  # armed by the first batch
    conn._watch.cancel()
    conn._check_stall()  # the check fires while nothing is being sent
    assert conn._watch is None and not conn._stalled and not conn.writer.done()
    conn.send("after a long idle")
    await ws.until_sent(4)
    conn.close()
    await asyncio.wait_for(conn.writer, 5)
    assert ws.closed_with == 1000 and not conn._stalled and ws.sent[-1] == "after a long idle"
