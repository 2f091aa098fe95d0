"""app.transport.asgi and the route ahead of FastAPI: which sockets are the game's, the allowed origins,
and the benchmark's echoes (served only when asked for)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from typing import ClassVar

import pytest
import websockets
from websockets.exceptions import InvalidStatus

from app.transport.asgi import RawSocket, game_socket_code

from .harness import Client, ServerProcess

FRIENDS = "https://friends.example"


def _scope(path: str, kind: str = "websocket", root: str = "") -> dict:
    return {"type": kind, "path": path, "root_path": root}


def test_only_a_websocket_on_ws_and_one_path_segment_is_a_game_socket():
    assert game_socket_code(_scope("/ws/ABC123")) == "ABC123"
    assert game_socket_code(_scope("/ws/abc")) == "abc"  # normalised later, as before
    assert game_socket_code(_scope("/mercy/ws/ABC123", root="/mercy")) == "ABC123"
    assert game_socket_code(_scope("/mercyless/ws/ABC123", root="/mercy")) is None  # not below it
    for path in ("/ws/", "/ws", "/ws/AB/CD", "/ws-echo", "/api/rooms", "/wsx/ABC"):
        assert game_socket_code(_scope(path)) is None, path
    assert game_socket_code(_scope("/ws/ABC123", kind="http")) is None


async def test_a_raw_socket_accepts_after_the_connect_message_and_closes_once():
    sent: list[dict] = []
    inbox: asyncio.Queue[dict] = asyncio.Queue()
    inbox.put_nowait({"type": "websocket.connect"})

    async def send(message: dict) -> None:
        sent.append(message)

    ws = RawSocket({"type": "websocket", "path": "/ws/X", "headers": [(b"origin", b"o")]},
                   inbox.get, send)
    assert ws.headers.get("origin") == "o" and ws.client_host == "?"
    await ws.accept()
    await ws.send_text("hi")
    await ws.close(4409)
    await ws.close(1000)  # already closed: nothing more goes out
    assert sent == [{"type": "websocket.accept"}, {"type": "websocket.send", "text": "hi"},
                    {"type": "websocket.close", "code": 4409}]


async def test_a_raw_socket_sends_through_a_server_send_that_is_not_a_coroutine():
    sent: list[dict] = []

    class Sent:
        def __init__(self, message: dict) -> None:
            self.message = message

        def __await__(self):
            sent.append(self.message)
            return iter(())

    ws = RawSocket({"type": "websocket"}, None, Sent)  # type: ignore[arg-type]
    sending = ws.send_text("hi")
    with contextlib.suppress(StopIteration):
        sending.send(None)  # driven as Connection.send drives it
    assert sent == [{"type": "websocket.send", "text": "hi"}]


async def test_a_raw_socket_refuses_to_accept_without_a_connect_message():
    inbox: asyncio.Queue[dict] = asyncio.Queue()
    inbox.put_nowait({"type": "websocket.disconnect", "code": 1006})

    async def send(message: dict) -> None:
        raise AssertionError("nothing may be sent")

    with pytest.raises(RuntimeError):
        await RawSocket({"type": "websocket"}, inbox.get, send).accept()


@pytest.fixture(scope="module")
def servers():
    started = {"plain": ServerProcess(allowed_origins=[FRIENDS]).start(),
               "bench": ServerProcess(module="bench.serve").start()}
    yield started
    for proc in started.values():
        err = proc.stop()
        assert "Traceback" not in err, err[-3000:]


async def _refused(url: str, **kwargs) -> int:
    with pytest.raises(InvalidStatus) as refused:
        await websockets.connect(url, **kwargs)
    return refused.value.response.status_code


async def test_game_sockets_from_other_origins_are_refused(servers):
    server = servers["plain"]
    host = server.create("Ann")
    url = f"{server.ws_url}/ws/{host['code']}"
    assert await _refused(url, origin="https://elsewhere.example") == 403
    # an allowed origin, the page's own host, and no Origin at all (not a browser) get in
    for origin in (FRIENDS, f"http://127.0.0.1:{server.port}", None):
        ws = await websockets.connect(url, origin=origin)
        await ws.send(json.dumps({"type": "hello", "token": host["token"]}))
        welcome = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert welcome["type"] == "welcome" and welcome["you"] == host["player_id"], origin
        await ws.close()


async def test_a_path_below_a_room_is_no_game_socket_and_the_echo_is_the_benchmarks_alone(servers):
    server = servers["plain"]
    host = server.create("Ann")
    assert await _refused(f"{server.ws_url}/ws/{host['code']}/more") == 403  # no such route
    assert await _refused(f"{server.ws_url}/ws-echo") == 403
    assert await _refused(f"{server.ws_url}/ws-echo-fastapi") == 403
    # the room itself still plays on the same server
    ann = await Client(server, host["code"], host["token"]).connect()
    assert ann.you == host["player_id"]
    await ann.close()


async def test_both_echoes_answer_every_frame_with_itself(servers):
    server = servers["bench"]
    for path in ("/ws-echo", "/ws-echo-fastapi"):
        async with websockets.connect(f"{server.ws_url}{path}") as ws:
            for text in ("one", '{"type":"play"}', "three"):
                await ws.send(text)
                assert await asyncio.wait_for(ws.recv(), 10) == text, path


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_text_frames_are_the_frames_the_websocket_library_makes(size):
    from websockets.protocol import State
    from websockets.server import ServerProtocol

    from app.transport.asgi import text_frames

    conn = ServerProtocol()
    conn.state = State.OPEN
    texts = ["é" * (size // 2) + "x" * (size % 2), "ok"]
    for text in texts:
        conn.send_text(text.encode())
    assert text_frames(texts) == b"".join(conn.data_to_send())


TEXTS = ["one", "é" * 100, "x" * 70_000, "three"]


@pytest.mark.parametrize("deflate", [False, True], ids=["plain", "deflate"])
async def test_several_frames_go_out_in_one_write_on_uvicorns_websocket(deflate, monkeypatch):
    """RawSocket.write_frames reaches into uvicorn's sans-I/O protocol (its attributes are not
    an API): with the installed uvicorn, configured as ``mercyless serve`` configures it (and
    with permessage-deflate, where the library frames them), the frames must go out in one
    write to the transport, in order, and a socket that is not open (not yet accepted, or
    closed) must refuse rather than write."""

    import app.transport.asgi as app_socket

    results: dict[str, object] = {}
    writes: list[bytes] = []
    done = asyncio.Event()
    made: list[int] = []  # frames made here rather than by the library
    text_frames = app_socket.text_frames

    def counted(texts):
        made.append(len(texts))
        return text_frames(texts)

    monkeypatch.setattr(app_socket, "text_frames", counted)

    async def app(scope, receive, send):
        if scope["type"] != "websocket":
            return
        ws = RawSocket(scope, receive, send)
        results["before accept"] = ws.write_frames(["too early"])
        await ws.accept()
        transport = ws._protocol.transport
        ws._protocol.transport = _CountingTransport(transport, writes)
        results["open"] = ws.write_frames(TEXTS)
        results["extensions"] = len(ws._protocol.conn.extensions)
        await ws.receive()  # the client's "bye"
        await ws.close(1000)
        results["closed"] = ws.write_frames(["too late"])
        ws._protocol.transport = transport
        done.set()

    got = await _exchange(app, deflate, len(TEXTS), done)
    assert got == TEXTS
    assert results == {"before accept": False, "open": True, "closed": False,
                       "extensions": int(deflate)}, results
    assert len(writes) == 2, writes  # the frames, then the close
    if not deflate:
        assert writes[0].endswith(b"three")
    assert made == ([] if deflate else [len(TEXTS)])  # compressed frames are the library's


class _CountingTransport:
    """The socket's transport, noting each write."""

    def __init__(self, transport, writes: list[bytes]) -> None:
        self._transport = transport
        self._writes = writes

    def write(self, data: bytes) -> None:
        self._writes.append(bytes(data))
        self._transport.write(data)

    def __getattr__(self, name: str):
        return getattr(self._transport, name)


class _WaitingSocket(RawSocket):
    """A socket whose every write must wait a moment (as when the client reads slowly): the
    connection's writer then sends the frames queued behind, one by one, through the library."""

    sent: ClassVar[list[type]] = []

    def write_frames(self, texts) -> bool:
        return False

    def send_text(self, text):
        sending = super().send_text(text)

        async def later():
            await asyncio.sleep(0.001)
            _WaitingSocket.sent.append(type(text))
            await sending

        return later()


@pytest.mark.parametrize("deflate", [False, True], ids=["plain", "deflate"])
@pytest.mark.parametrize("direct", [True, False], ids=["direct", "queued"])
async def test_frames_given_as_bytes_reach_the_client_as_text_frames(deflate, direct):
    """The fan-out hands a connection orjson's bytes: written at once (framed here, or by the
    library with permessage-deflate) or queued behind a write that must wait, each arrives as
    the text frame of the same JSON, in order, mixed with str frames."""
    from app.transport.connection import Connection

    frames: list[str | bytes] = [b'{"type":"patch","t":"' + "é".encode() * 50 + b'"}', '{"type":"ack"}',
                                 b'{"big":"' + b"y" * 70_000 + b'"}', *[b'{"n":%d}' % i for i in range(20)]]
    _WaitingSocket.sent = []
    done = asyncio.Event()

    async def app(scope, receive, send):
        if scope["type"] != "websocket":
            return
        ws = (RawSocket if direct else _WaitingSocket)(scope, receive, send)
        await ws.accept()
        conn = Connection(ws, "ROOM", "p0", outbox_limit=100, send_timeout_s=5.0)
        conn.send(frames[0])
        conn.send_frames([frames[1], frames[2]])
        for frame in frames[3:]:
            conn.send(frame)
        await ws.receive()  # the client's "bye"
        conn.close()
        await conn.wait_closed()
        done.set()

    got = await _exchange(app, deflate, len(frames), done)
    assert all(type(m) is str for m in got)  # text frames, never binary ones
    assert got == [f.decode() if isinstance(f, bytes) else f for f in frames]
    if not direct:  # the writer really drained bytes through the library's send
        assert bytes in _WaitingSocket.sent and len(_WaitingSocket.sent) == len(frames)


async def _exchange(app, deflate: bool, count: int, done: asyncio.Event) -> list:
    """Serve ``app`` on uvicorn's sans-I/O WebSocket (as ``mercyless serve`` configures it),
    read ``count`` messages as a client, say "bye" and wait for the app to be ``done``."""
    import uvicorn

    # listening before the server starts: the client's connect waits in the backlog
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", ws="websockets-sansio",
                                           ws_per_message_deflate=deflate))
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        async with websockets.connect(f"ws://127.0.0.1:{port}/", max_size=None) as ws:
            got = [await asyncio.wait_for(ws.recv(), 10) for _ in range(count)]
            await ws.send("bye")
            await asyncio.wait_for(done.wait(), 10)
    finally:
        server.should_exit = True
        await serving
    return got


def test_the_installed_uvicorn_is_one_the_direct_writes_were_checked_against():
    """RawSocket.write_frames reads uvicorn's protocol attributes, which are not its API. A new
    uvicorn release must be read again (and UVICORN_CHECKED widened) before it is trusted: until
    then the sockets use the public send, and this test says so loudly."""
    import uvicorn

    import app.transport.asgi as app_socket

    assert app_socket.checked_version(uvicorn.__version__), (
        f"uvicorn {uvicorn.__version__} is outside {app_socket.UVICORN_CHECKED}: check that its "
        "websockets_sansio_impl still has what RawSocket.write_frames reads, then widen the range")
    assert app_socket._direct["on"]


def test_only_the_checked_uvicorn_releases_are_written_through():
    import app.transport.asgi as app_socket

    assert [app_socket.checked_version(v) for v in ("0.35.0", "0.55.0", "0.55.7", "0.34.2", "0.56.0",
                                                     "1.0.0", "dev")] == [True] * 3 + [False] * 4
    assert not app_socket.fits(object())


async def test_with_an_unchecked_uvicorn_frames_go_one_by_one_through_the_public_send(monkeypatch):
    """A uvicorn the direct writes were not checked against: nothing reads its protocol, and
    every frame still arrives, in order, through the ASGI ``send``."""
    import app.transport.asgi as app_socket
    from app.transport.connection import Connection

    monkeypatch.setitem(app_socket._direct, "on", False)
    frames = [b'{"n":1}', '{"type":"ack"}', b'{"big":"' + b"z" * 70_000 + b'"}']
    seen: dict[str, object] = {}
    done = asyncio.Event()

    async def app(scope, receive, send):
        if scope["type"] != "websocket":
            return
        ws = RawSocket(scope, receive, send)
        await ws.accept()
        seen["protocol"] = ws._protocol
        seen["direct"] = ws.write_frames(["not written"])
        conn = Connection(ws, "ROOM", "p0", outbox_limit=100, send_timeout_s=5.0)
        conn.send(frames[0])
        conn.send_frames([frames[1], frames[2]])
        await ws.receive()  # the client's "bye"
        conn.close()
        await conn.wait_closed()
        done.set()

    got = await _exchange(app, False, len(frames), done)
    assert seen == {"protocol": None, "direct": False}
    assert got == [f.decode() if isinstance(f, bytes) else f for f in frames]
