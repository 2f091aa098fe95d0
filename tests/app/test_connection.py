"""app.transport.connection: frames go out in order, at once when the socket takes them; a socket whose
frames cannot be written in time is dropped, and only that one."""

from __future__ import annotations

import asyncio

import pytest
from starlette.websockets import WebSocketState

from app.transport.connection import Connection


class FakeSocket:
    """A socket whose writes finish only when ``writable`` is set (a full send buffer)."""

    def __init__(self, writable: bool) -> None:
        self.application_state = WebSocketState.CONNECTED
        self.writable = asyncio.Event()
        if writable:
            self.writable.set()
        self.sent: list[str] = []
        self.batching = True  # False: as a server without RawSocket.write_frames' fast path
        self.batches: list[list[str]] = []
        self.closed_with: int | None = None
        self.arrived = asyncio.Condition()

    def write_frames(self, texts: list[str]) -> bool:
        """As RawSocket's: all at once if the socket takes them now (``batches`` notes each)."""
        if not self.batching or not self.writable.is_set():
            return False
        self.batches.append(list(texts))
        self.sent.extend(texts)
        return True

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
    return Connection(ws, "ROOM", "p1", outbox_limit=16, send_timeout_s=timeout_s)  # type: ignore[arg-type]


async def test_frames_go_out_as_they_are_sent_without_a_writer_task():
    ws = FakeSocket(writable=True)
    conn = _connection(ws, 30)
    for i in range(3):
        conn.send(f"frame {i}")
    assert ws.sent == ["frame 0", "frame 1", "frame 2"] and conn.writer is None
    conn.close()
    await asyncio.wait_for(conn.wait_closed(), 5)
    assert ws.closed_with == 1000


async def test_frames_sent_while_a_write_waits_follow_it_in_order():
    ws = FakeSocket(writable=False)
    conn = _connection(ws, 30)
    for i in range(4):
        conn.send(f"frame {i}")
    conn.close(4409)  # after the frames already accepted
    writer = conn.writer
    assert writer is not None and ws.sent == []
    assert list(conn.outbox) == ["frame 1", "frame 2", "frame 3", None]
    ws.writable.set()
    await asyncio.wait_for(conn.wait_closed(), 5)
    assert ws.sent == ["frame 0", "frame 1", "frame 2", "frame 3"] and ws.closed_with == 4409
    assert writer.done() and conn.writer is None and conn._watch is None and not conn._stalled


async def test_a_write_that_cannot_finish_in_time_drops_the_socket():
    ws = FakeSocket(writable=False)
    conn = _connection(ws, 0.05)
    conn.send("a frame the reader never takes")
    writer = conn.writer
    assert writer is not None
    done, _ = await asyncio.wait({writer}, timeout=5)  # asyncio.wait cancels nothing
    assert writer in done and conn._stalled
    assert conn.closed and ws.closed_with == 1000 and ws.sent == []


async def test_a_backlog_over_the_limit_drops_the_reader_with_1013():
    ws = FakeSocket(writable=False)
    conn = _connection(ws, 30)
    for i in range(1 + 16 + 1):  # one waiting write, a full backlog, one too many
        conn.send(f"frame {i}")
    await asyncio.wait_for(conn.wait_closed(), 5)
    assert conn.closed and ws.closed_with == 1013 and ws.sent == []
    conn.send("after the close")
    assert ws.sent == []


async def test_a_socket_that_keeps_up_is_never_dropped_however_long_it_idles():
    ws = FakeSocket(writable=False)
    conn = _connection(ws, 30)
    conn.send("frame 0")
    conn.send("frame 1")
    watch = conn._watch
    assert watch is not None  # armed while a write waits
    ws.writable.set()
    await ws.until_sent(2)
    if conn.writer is not None:
        await asyncio.wait_for(conn.writer, 5)
    assert conn.writer is None and conn._watch is None and watch.cancelled()
    conn._check_stall()  # a check that fires while nothing is being sent drops nothing
    assert not conn._stalled and not conn.closed
    conn.send("after a long idle")
    assert ws.sent[-1] == "after a long idle"
    conn.close()
    await asyncio.wait_for(conn.wait_closed(), 5)
    assert ws.closed_with == 1000 and not conn._stalled


async def test_a_socket_that_fails_a_write_is_closed_and_the_error_stays_inside():
    ws = FakeSocket(writable=True)
    ws.batching = False  # the server's send, not the direct write

    async def broken(text: str) -> None:
        raise RuntimeError('Cannot call "send" once a close message has been sent.')

    ws.send_text = broken  # type: ignore[method-assign]
    conn = _connection(ws, 30)
    conn.send("a frame")
    assert conn.closed and conn.writer is None
    await asyncio.wait_for(conn.wait_closed(), 5)
    assert ws.closed_with == 1000


@pytest.mark.parametrize("error", [OSError("transport gone"), AttributeError("no 'conn'")],
                         ids=["closed transport", "changed server"])
async def test_a_single_frame_whose_direct_write_fails_closes_the_socket(error, caplog):
    """A closed transport's error is routine (an info line); anything else means the server's
    protocol is not what RawSocket.write_frames expects, and is logged with its traceback."""
    ws = FakeSocket(writable=True)

    def broken(texts: list[str]) -> bool:
        raise error

    ws.write_frames = broken  # type: ignore[method-assign]
    conn = _connection(ws, 30)
    with caplog.at_level("INFO", logger="mercyless.ws"):
        conn.send("a frame")
    assert conn.closed and conn.writer is None and ws.sent == []
    await asyncio.wait_for(conn.wait_closed(), 5)
    assert ws.closed_with == 1000
    warned = [r for r in caplog.records if r.levelname == "WARNING"]
    assert [r.exc_info is not None for r in warned] == ([] if isinstance(error, OSError) else [True])


async def test_several_frames_go_out_in_one_write_when_the_socket_takes_them():
    ws = FakeSocket(writable=True)
    conn = _connection(ws, 30)
    conn.send("frame 0")
    conn.send_frames(["patch", "ack"])
    assert ws.sent == ["frame 0", "patch", "ack"] and ws.batches == [["frame 0"], ["patch", "ack"]]
    assert conn.writer is None


async def test_frames_the_socket_cannot_take_at_once_go_one_by_one_in_order():
    ws = FakeSocket(writable=True)
    ws.batching = False
    conn = _connection(ws, 30)
    conn.send_frames(["patch", "ack"])
    assert ws.sent == ["patch", "ack"] and ws.batches == []
    # behind a write that waits: queued after it, in order, never around it
    ws.writable.clear()
    ws.batching = True
    conn.send("frame 0")
    conn.send_frames(["patch 1", "ack 1"])
    assert list(conn.outbox) == ["patch 1", "ack 1"] and ws.batches == []
    ws.writable.set()
    await ws.until_sent(5)
    assert ws.sent == ["patch", "ack", "frame 0", "patch 1", "ack 1"]
    conn.close()
    await asyncio.wait_for(conn.wait_closed(), 5)


async def test_a_batch_whose_write_fails_closes_the_socket_and_the_error_stays_inside():
    ws = FakeSocket(writable=True)

    def broken(texts: list[str]) -> bool:
        raise OSError("transport gone")

    ws.write_frames = broken  # type: ignore[method-assign]
    conn = _connection(ws, 30)
    conn.send_frames(["patch", "ack"])
    assert conn.closed and ws.sent == []
    await asyncio.wait_for(conn.wait_closed(), 5)
    assert ws.closed_with == 1000
    conn.send_frames(["after the close"])
    assert ws.sent == []
