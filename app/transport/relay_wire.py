"""What the relay (app/transport/relay.py) sends between processes, and the two ends of a relayed socket:
``RelayedSocket`` on the room's home, ``Link`` on the process the client reached.

Every message starts with its kind, its sender's id and its number in the sender's stream to
the receiving process. ``OPEN`` (a socket's room and address) and ``PING`` go out at once, one
publish each: their receiver count tells whether the home listens. Everything else is a
``BATCH`` of records, every record one process made for another in one turn of its loop: toward
the relaying process a socket's frames, a close with its code, a pong; toward the home a
client's frame (text or binary) and a socket gone; either way, that the sender is stopping. A
process is home to some rooms and relays for others, so one batch may carry both.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from starlette.datastructures import Headers
from starlette.websockets import WebSocketState

from app.core.protocol import BadMessage, Close, parse_json, usable_id

if TYPE_CHECKING:
    from app.transport.connection import Connection
    from app.transport.relay import Relay

# to the home, one publish each (its receiver count tells whether the home listens)
OPEN, PING = b"o", b"p"
# either way: a batch of records, in the order they were made
BATCH = b"B"
# records to the relaying process: a socket's frames, its close (with the code), a pong
FRAMES, CLOSE, PONG = 0, 1, 2
# records to the home: a client's frame, its socket gone
TEXT, BINARY, GONE = 3, 4, 5
# either way: the sender is stopping (relay nothing more to it, end what it relayed)
LEAVING = 6
_CARRIES_FRAMES = (FRAMES, TEXT, BINARY)
SEQ = struct.Struct("!I")  # each message's place in its sender's stream to this process
_KEY = struct.Struct("!BB")  # record kind, key length
_COUNT = struct.Struct("!H")
_SIZE = struct.Struct("!I")
_KIND = struct.Struct("!B")
_ONE_FRAME = struct.Struct("!HI")  # a count of 1, then the frame's size

PONG_RECORD = _KEY.pack(PONG, 0) + _COUNT.pack(0)
LEAVING_RECORD = _KEY.pack(LEAVING, 0) + _COUNT.pack(0)


def frames_record(key: str, texts: Sequence[str | bytes]) -> bytes:
    raw = key.encode()
    parts = [_KEY.pack(FRAMES, len(raw)), raw, _COUNT.pack(len(texts))]
    for text in texts:
        data = text if type(text) is bytes else text.encode()  # type: ignore[union-attr]
        parts.append(_SIZE.pack(len(data)))
        parts.append(data)
    return b"".join(parts)


def close_record(key: str, code: int) -> bytes:
    raw = key.encode()
    return _KEY.pack(CLOSE, len(raw)) + raw + _COUNT.pack(code)


def client_record(kind: int, key: bytes, payload: bytes) -> bytes:
    """A client's frame (``TEXT`` or ``BINARY``) for the home; ``key`` from :func:`key_bytes`."""
    return _KIND.pack(kind) + key + _ONE_FRAME.pack(1, len(payload)) + payload


def gone_record(key: bytes) -> bytes:
    """The client's socket is gone: its session on the home ends."""
    return _KIND.pack(GONE) + key + _COUNT.pack(0)


def read_batch(data: memoryview) -> Iterator[tuple[int, str, int, list[bytes]]]:
    """A batch's records: (kind, socket key, frame count or close code, frames)."""
    at, end = 0, len(data)
    while at < end:
        kind, size = _KEY.unpack_from(data, at)
        at += 2
        key = bytes(data[at:at + size]).decode()
        at += size
        (count,) = _COUNT.unpack_from(data, at)
        at += 2
        frames = []
        if kind in _CARRIES_FRAMES:
            for _ in range(count):
                (length,) = _SIZE.unpack_from(data, at)
                at += 4
                frames.append(bytes(data[at:at + length]))
                at += length
        yield kind, key, count, frames


class RelayedSocket:
    """On the home: the socket of a player connected to another process, as app/transport/session.py's
    session sees a socket. Frames written to it go to that process in the next batch."""

    __slots__ = ("_inbox", "_relay", "application_state", "client_host", "code", "headers", "key", "node")

    def __init__(self, relay: Relay, node: str, key: str, code: str, client_host: str,
                 headers: dict[str, str]) -> None:
        self._relay = relay
        self.node = node
        self.key = key
        self.code = code
        self.client_host = client_host
        self.headers = Headers(headers)
        self.application_state = WebSocketState.CONNECTED  # the relaying process accepted it
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def receive(self) -> dict[str, Any]:
        return await self._inbox.get()

    def feed(self, message: dict[str, Any]) -> None:
        self._inbox.put_nowait(message)

    def write_frames(self, texts: Sequence[str | bytes]) -> bool:
        if self.application_state != WebSocketState.DISCONNECTED:
            self._relay.send_frames(self.node, self.key, texts)
        return True  # never waits: the relaying process's own queue does

    async def send_text(self, text: str | bytes) -> None:
        self.write_frames((text,))

    async def close(self, code: int = Close.NORMAL, reason: str = "") -> None:
        self.end(code)  # (a relay's close record carries the code alone)

    def end(self, code: int) -> None:
        """Close: the relaying process closes the client's socket with ``code``, and the
        session reading this socket sees it go."""
        if self.application_state == WebSocketState.DISCONNECTED:
            return
        self.application_state = WebSocketState.DISCONNECTED
        self._relay.send_close(self.node, self.key, code)
        self.feed({"type": "websocket.disconnect", "code": code})


class Link:
    """On the relaying process: a client's socket whose session runs on ``home``."""

    __slots__ = ("closed_by_home", "conn", "home", "sent")

    def __init__(self, conn: Connection, home: str) -> None:
        self.conn = conn
        self.home = home
        self.closed_by_home = False
        self.sent = 0  # the client's frames that went out to the home (the first is its hello)


def key_bytes(key: str) -> bytes:
    """A socket's key as a record carries it: its length, then the key."""
    raw = key.encode()
    return bytes((len(raw),)) + raw


def _client_message(payload: bytes) -> dict[str, Any]:
    """A client's frame as the session would parse it (empty when it is not a JSON object)."""
    try:
        raw = parse_json(payload)
    except BadMessage:
        return {}
    return raw if isinstance(raw, dict) else {}


def message_id(payload: bytes) -> str | None:
    """The ``id`` of a client's frame, if it has a usable one (for an error answered at the edge)."""
    return usable_id(_client_message(payload))


def is_ping(payload: bytes) -> bool:
    return _client_message(payload).get("type") == "ping"
