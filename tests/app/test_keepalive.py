"""The server pings only a socket gone quiet (app/transport/keepalive.py): a client that pings at
its own pace, as the browser does, is never pinged; a quiet one is, and stays open while it
answers. (A quiet one that does not answer is closed: tests/app/test_limits.py.)"""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets
from websockets.asyncio.client import ClientConnection
from websockets.frames import Opcode

from app.transport import keepalive

from .harness import ServerProcess

PING_S = 1.0


class Counting(ClientConnection):
    """A client connection that counts the server's protocol pings (it answers them itself)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.pinged = 0
        self.pinged_twice = asyncio.Event()

    def process_event(self, event) -> None:
        if getattr(event, "opcode", None) is Opcode.PING:
            self.pinged += 1
            if self.pinged >= 2:
                self.pinged_twice.set()
        super().process_event(event)


@pytest.fixture
def pinging():
    server = ServerProcess(redis="fake", ws_ping_interval_s=PING_S, ws_ping_timeout_s=PING_S).start()
    yield server
    err = server.stop()
    assert "Traceback" not in err, err[-3000:]


async def _open(server: ServerProcess, code: str, token: str) -> Counting:
    ws = await websockets.connect(f"{server.ws_url}/ws/{code}", create_connection=Counting,
                                  ping_interval=None)
    await ws.send(json.dumps({"type": "hello", "token": token}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws  # type: ignore[return-value]


async def test_a_socket_heard_from_is_never_pinged_and_a_quiet_one_is_and_stays(pinging):
    host = pinging.create("Ann")
    guest = pinging.join(host["code"], "Bob")
    chatty = await _open(pinging, host["code"], host["token"])
    quiet = await _open(pinging, host["code"], guest["token"])

    async def chat() -> None:  # the browser's heartbeat, only faster than the server's interval
        while True:
            await chatty.send('{"type":"ping"}')
            await asyncio.sleep(PING_S / 4)

    chatting = asyncio.create_task(chat())
    try:
        await asyncio.wait_for(quiet.pinged_twice.wait(), 10 * PING_S)
    finally:
        chatting.cancel()
    assert chatty.pinged == 0, "a client heard from within the interval was pinged"
    assert quiet.state is websockets.State.OPEN  # it answered, so it stays
    await quiet.send('{"type":"ping"}')
    assert json.loads(await asyncio.wait_for(quiet.recv(), 5))["type"] in ("pong", "patch")
    await chatty.close()
    await quiet.close()


def test_the_quiet_keepalive_is_taken_on_the_installed_uvicorn():
    assert keepalive.protocol_class() is keepalive.QuietKeepalive
