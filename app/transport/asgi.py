"""The game's WebSocket as plain ASGI: ``/ws/{code}`` is answered before FastAPI's router.

Why: a socket routed through FastAPI waits inside ~20 nested coroutines (the middleware stack,
the router, the route's wrappers, Starlette's ``WebSocket``) for as long as it is open, and
every frame in or out passes through two of them. Over 1,000 players those frames are ~100k
objects that every full garbage collection walks (a 70-110 ms pause of the whole process every
few seconds, measured with ``gc.callbacks``; the paced benchmark's p99). Served here, a socket
holds four, and a frame goes straight to uvicorn's transport (``RawSocket.write_frames``), or
to its ``send`` when the socket cannot take it at once.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping, Sequence
from types import CoroutineType
from typing import Any

from starlette.datastructures import Headers
from starlette.websockets import WebSocketState

from app.core.protocol import Close

try:  # the server's own protocol, to write several frames at once (see RawSocket.write_frames)
    import uvicorn
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from websockets.protocol import State
except ImportError:  # pragma: no cover - another server or implementation: one frame per send
    uvicorn = None  # type: ignore[assignment]
    WebSocketsSansIOProtocol = None  # type: ignore[assignment,misc]

log = logging.getLogger("mercyless.ws")

# -- speed: frames written through uvicorn's protocol (docs/performance.md) -----------------------
#: The uvicorn releases (major, minor; inclusive) whose sans-I/O protocol was read for
#: ``RawSocket.write_frames``: it uses attributes that are not uvicorn's API. Any other release
#: gets the public ASGI ``send``, one frame at a time; tests/app/test_socket.py fails when the
#: installed uvicorn is outside this range, so an upgrade is checked by a person.
UVICORN_CHECKED = ((0, 35), (0, 55))
#: what write_frames reads of the protocol, and of its websockets connection
PROTOCOL_ATTRIBUTES = ("handshake_complete", "close_sent", "disconnected", "initial_response", "writable",
                       "transport", "conn")
CONNECTION_ATTRIBUTES = ("state", "extensions", "writes", "expect_continuation_frame", "send_text",
                         "data_to_send")


def checked_version(version: str) -> bool:
    """``version`` (uvicorn's ``__version__``) is one write_frames was written for."""
    try:
        major_minor = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    return UVICORN_CHECKED[0] <= major_minor <= UVICORN_CHECKED[1]


def fits(protocol: Any) -> bool:
    """``protocol`` has every attribute write_frames reads."""
    conn = getattr(protocol, "conn", None)
    return (all(hasattr(protocol, name) for name in PROTOCOL_ATTRIBUTES)
            and all(hasattr(conn, name) for name in CONNECTION_ATTRIBUTES))


_direct = {"on": WebSocketsSansIOProtocol is not None and uvicorn is not None
           and checked_version(uvicorn.__version__), "checked": False}


def _direct_protocol(send: Send) -> Any:
    """uvicorn's protocol behind ``send`` when write_frames may write through it, else None."""
    protocol = getattr(send, "__self__", None)
    if not _direct["on"] or not isinstance(protocol, WebSocketsSansIOProtocol):
        return None
    if not _direct["checked"]:  # the attributes are looked at once, on the first socket
        _direct["checked"] = True
        if not fits(protocol):
            _direct["on"] = False
            log.warning("uvicorn's WebSocket protocol changed: frames go out one by one")
            return None
    return protocol
# -- end of speed ---------------------------------------------------------------------------------

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

PREFIX = "/ws/"


def route_path(scope: MutableMapping[str, Any]) -> str:
    """The path below the app's mount point (``root_path``), as Starlette's router sees it."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root):] or "/"
    return path


def game_socket_code(scope: MutableMapping[str, Any]) -> str | None:
    """The room code in a ``/ws/{code}`` WebSocket scope (as the router's ``{code}`` would
    match it: one non-empty path segment), else None."""
    if scope["type"] != "websocket":
        return None
    path = route_path(scope)
    if not path.startswith(PREFIX):
        return None
    code = path[len(PREFIX):]
    return code if code and "/" not in code else None


class RawSocket:
    """One ASGI WebSocket with the few calls a session makes, and nothing between them and the
    server: ``send_text`` returns the server's own send coroutine (the connection drives it
    itself), ``receive`` is the server's receive."""

    __slots__ = ("_protocol", "_send", "application_state", "receive", "scope")

    def __init__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        self.scope = scope
        self.receive = receive
        self._send = send
        self.application_state = WebSocketState.CONNECTING
        self._protocol = _direct_protocol(send)

    @property
    def headers(self) -> Headers:
        return Headers(scope=self.scope)

    @property
    def client_host(self) -> str:
        client = self.scope.get("client")
        return client[0] if client else "?"

    async def accept(self) -> None:
        """Read the client's connect message, then complete the handshake."""
        message = await self.receive()
        if message["type"] != "websocket.connect":
            raise RuntimeError(f"expected websocket.connect, got {message['type']!r}")
        await self._send({"type": "websocket.accept"})
        self.application_state = WebSocketState.CONNECTED

    def send_text(self, text: str | bytes) -> Coroutine[Any, Any, None]:
        """The server's send of a text frame (``text`` may be UTF-8 bytes: ASGI's text is a str)."""
        if type(text) is bytes:
            text = text.decode()
        sending = self._send({"type": "websocket.send", "text": text})
        if type(sending) is CoroutineType:  # uvicorn's: driven as it is by Connection.send
            return sending
        return _awaiting(sending)  # any other awaitable (another server, a wrapping layer)

    def write_frames(self, texts: Sequence[str | bytes]) -> bool:
        """Write ``texts`` (str, or UTF-8 bytes as orjson makes them) as text frames in one
        write to the socket, if the server is uvicorn's sans-I/O WebSocket and the socket takes
        them now; False (nothing written): send them one by one through the server's ``send``.
        A move answers its player with a patch and an ack together: one system call instead of
        two (a small loopback send costs 0.5-2.5 us of CPU here, python -m bench.syscalls).

        This does what uvicorn's ``send`` does for a frame, through its protocol's attributes,
        only with a uvicorn release it was checked against (``UVICORN_CHECKED``) whose protocol
        has them all (``fits``); tests/app/test_socket.py checks it is taken with the installed
        uvicorn, so an upgrade fails a test, not a game. With no extension negotiated and nothing
        waiting in the protocol's own buffer, the frames are made here (a server's text frame
        is a 2-10 byte header and the payload, RFC 6455 5.2): the library's framing costs ~2 us
        a frame where this costs ~0.4 (python -m bench.frames), and a move sends ~5."""
        protocol = self._protocol
        if (protocol is None or not protocol.handshake_complete or protocol.close_sent
                or protocol.disconnected or protocol.initial_response is not None
                or not protocol.writable.is_set() or protocol.transport.is_closing()):
            return False
        conn = protocol.conn
        if conn.state is not State.OPEN:
            return False
        if not conn.extensions and not conn.writes and not conn.expect_continuation_frame:
            protocol.transport.write(text_frames(texts))
            return True
        try:
            for text in texts:
                conn.send_text(text if type(text) is bytes else text.encode())  # type: ignore[union-attr]
        except Exception:
            # nothing went out: what was framed is dropped, and the one-by-one sends (which
            # report a closed socket as the server does) send every frame once
            conn.data_to_send()
            return False
        protocol.transport.write(b"".join(conn.data_to_send()))
        return True

    async def close(self, code: int = Close.NORMAL, reason: str = "") -> None:
        """Close (before the handshake: refuse it with HTTP 403, as the server does for any
        close sent then). Closing twice sends nothing."""
        if self.application_state == WebSocketState.DISCONNECTED:
            return
        accepted = self.application_state == WebSocketState.CONNECTED
        self.application_state = WebSocketState.DISCONNECTED
        await self._send({"type": "websocket.close", "code": code, "reason": reason} if reason
                         else {"type": "websocket.close", "code": code})
        if accepted and code == Close.POLICY:
            # a flood (app/transport/gate.py): the connection goes now, its close answer not
            # waited for. The server would read the socket until the answer came (uvicorn: up
            # to 10 s), parsing every frame a flooder still sends only to drop it
            transport = getattr(getattr(self._send, "__self__", None), "transport", None)
            if transport is not None:
                transport.close()


_HEAD_16 = struct.Struct("!BBH")
_HEAD_64 = struct.Struct("!BBQ")
_TEXT_FIN = 0x81  # FIN, opcode 1 (text); a server's frames are not masked


def text_frames(texts: Sequence[str | bytes]) -> bytes:
    """``texts`` (str, or UTF-8 bytes) as unmasked, unfragmented WebSocket text frames (RFC
    6455 5.2), back to back."""
    parts: list[bytes] = []
    for text in texts:
        data = text if type(text) is bytes else text.encode()  # type: ignore[union-attr]
        size = len(data)
        if size < 126:
            parts.append(bytes((_TEXT_FIN, size)))
        elif size < 65536:
            parts.append(_HEAD_16.pack(_TEXT_FIN, 126, size))
        else:
            parts.append(_HEAD_64.pack(_TEXT_FIN, 127, size))
        parts.append(data)
    return b"".join(parts)


async def _awaiting(awaitable: Awaitable[None]) -> None:
    await awaitable
