"""bench.crowd's phones read the kernel's receive stamp of a reply (#45): a round trip measured
to it leaves out the time the generator's own process waited for a CPU."""

from __future__ import annotations

import asyncio
import threading
import time

import websockets
from websockets.sync.server import serve

from bench.crowd import stamp_reads


def test_the_stamp_is_when_the_bytes_arrived_not_when_a_late_loop_read_them():
    asked, sent = threading.Event(), threading.Event()
    sent_by: list[float] = []

    def handler(socket):
        if asked.wait(10):
            socket.send("the reply")
            sent_by.append(time.time())
            sent.set()
        socket.recv(timeout=10)

    with serve(handler, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.socket.getsockname()[1]

        async def phone() -> tuple[float, float, list[tuple[float, float]]]:
            reads: list[tuple[float, float]] = []  # (stamp, when the loop read it)
            async with websockets.connect(f"ws://127.0.0.1:{port}", compression=None) as ws:
                assert stamp_reads(ws, lambda data, stamp: reads.append((stamp, time.time())))
                asked_at = time.time()
                asked.set()
                # the loop is busy (as a generator's loop on a shared core) until the reply is out
                assert sent.wait(10)
                busy_until = time.time()
                assert await ws.recv() == "the reply"
                await ws.send("bye")
            return asked_at, busy_until, reads

        asked_at, busy_until, reads = asyncio.run(phone())
    assert reads, "no stamped read"
    stamp, read_at = reads[0]
    assert asked_at <= stamp <= sent_by[0] <= busy_until <= read_at


def test_a_connection_on_another_transport_is_left_as_it_was():
    class Elsewhere:
        transport = object()

    assert stamp_reads(Elsewhere(), lambda data, stamp: None) is False
