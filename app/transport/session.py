"""``/ws/{code}``: hello with a token, then typed messages in, acks/errors/patches out.

The seat comes from the token presented in ``hello`` and is bound to the socket; no message
can name another seat. Every message but ``ping`` gets exactly one ``ack`` or ``error``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from redis.exceptions import RedisError
from starlette.websockets import WebSocketState

from app.cluster.hub import Hub
from app.core.codes import normalize_code, token_hash
from app.core.protocol import BadMessage, Close, Err, dumps, parse_json, parse_message, usable_id
from app.rooms import commands
from app.rooms.intent import error
from app.transport.asgi import RawSocket
from app.transport.connection import Connection

log = logging.getLogger("mercyless.ws")


def origin_allowed(ws: RawSocket, allowed: list[str]) -> bool:
    origin = ws.headers.get("origin")
    if origin is None:  # not a browser: the token is the credential
        return True
    if "*" in allowed or origin in allowed:
        return True
    host = ws.headers.get("host", "")
    return origin.split("://", 1)[-1] == host


async def serve(ws: RawSocket, hub: Hub, code: str) -> None:
    """One player's socket on ``/ws/{code}``, from the handshake to the close (app.main routes
    it here ahead of FastAPI's router: see app.transport.asgi)."""
    settings = hub.settings
    if not origin_allowed(ws, settings.allowed_origins):
        await ws.close(Close.POLICY)
        return
    ip = ws.client_host
    if not hub.limits.open_socket(ip):
        await ws.close(Close.TRY_AGAIN_LATER)
        return
    try:
        room_code = normalize_code(code)
        relay = hub.relay
        if relay is not None and room_code is not None:
            try:
                home = await relay.home_of(room_code)
            except RedisError:
                home = None  # served here: the hello meets the same outage and says so
            if home is not None and await relay.serve(ws, room_code, home):
                return
        await session(ws, hub, code)
    finally:
        hub.limits.close_socket(ip)


async def session(ws: RawSocket, hub: Hub, code: str) -> None:
    """The socket's whole session on this process: hello, then its messages until it closes
    (``ws`` may be one relayed from another process, app/relay.py)."""
    settings = hub.settings
    if ws.application_state == WebSocketState.CONNECTING:
        await ws.accept()
    room_code = normalize_code(code)
    try:
        message = await asyncio.wait_for(ws.receive(), settings.hello_timeout_ms / 1000)
    except (TimeoutError, RuntimeError):
        with contextlib.suppress(Exception):
            await ws.close(Close.HELLO_TIMEOUT)
        return
    if message["type"] == "websocket.disconnect":
        return
    first = message.get("text")
    if first is None:  # a binary frame: read as UTF-8 text, as every later frame is
        first = (message.get("bytes") or b"").decode("utf-8", "replace")
    token = _hello_token(first, settings.max_frame_bytes)
    if room_code is None:
        await ws.close(Close.NO_ROOM)
        return
    if token is None:
        await ws.close(Close.BAD_TOKEN)
        return
    conn = Connection(ws, room_code, "", outbox_limit=settings.outbox_limit, burst=settings.rate_burst,
                      per_s=settings.rate_per_s, send_timeout_s=settings.send_timeout_s)
    answer = await hub.submit(room_code, commands.command("hello", conn, token_hash(token), hub.sockets,
                                                          hub.origin))
    if answer["type"] == "error":
        if answer["code"] == Err.ROOM_NOT_FOUND:
            await hub.limits.join_failed(ws.client_host)
        conn.close(Close.NO_ROOM if answer["code"] == Err.ROOM_NOT_FOUND else
                   Close.TRY_AGAIN_LATER if answer["code"] == Err.UNAVAILABLE else Close.BAD_TOKEN)
        await hub.detach(conn)  # registered if the hello ran but its commit failed
        await conn.wait_closed()
        return
    await hub.attach(conn)  # subscribe to other processes' commits
    try:
        await _read_loop(hub, conn)
    finally:
        conn.close()
        if await hub.detach(conn):
            await hub.submit(room_code, commands.command("drop", conn, hub.sockets, hub.origin))
        await conn.wait_closed()  # the last frames and the close frame go out first


def _hello_token(text: str, limit: int) -> str | None:
    if len(text) > limit:
        return None
    try:
        raw = parse_json(text)
    except BadMessage:
        return None
    if not isinstance(raw, dict) or raw.get("type") != "hello":
        return None
    token = raw.get("token")
    return token if isinstance(token, str) and 8 <= len(token) <= 128 else None


async def _read_loop(hub: Hub, conn: Connection) -> None:
    ws = conn.ws
    limit = hub.settings.max_frame_bytes
    while not conn.closed:
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            data = message.get("bytes") or b""
            if len(data) > limit:
                text = "x" * (limit + 1)
            else:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    conn.send(dumps(error(None, Err.BAD_MESSAGE, "frames are UTF-8 JSON")))
                    continue
        if len(text) > limit:
            conn.send(dumps(error(None, Err.TOO_LARGE, f"frames are at most {limit} bytes")))
            conn.close(Close.TOO_LARGE)
            return
        try:
            raw = parse_json(text)
        except BadMessage as bad:
            conn.send(dumps(error(None, bad.code, bad.message)))
            continue
        if isinstance(raw, dict) and raw.get("type") == "ping":
            conn.send('{"type":"pong"}')
            continue
        if not conn.bucket.take():
            msg_id = usable_id(raw) if isinstance(raw, dict) else None
            # a retry of a message already answered gets that answer, even in a burst
            earlier = None
            if msg_id is not None:
                with contextlib.suppress(RedisError):
                    earlier = await hub.store.answer(conn.code, f"{conn.player}:{msg_id}")
            conn.send(dumps(earlier or error(msg_id, Err.RATE_LIMITED, "slow down")))
            continue
        try:
            msg = parse_message(raw)
        except BadMessage as bad:
            conn.send(dumps(error(bad.msg_id, bad.code, bad.message)))
            continue
        if msg.type != "leave":
            # the room's actor sends the answer itself, a move's ack in the same write as the
            # mover's patch; the reader still waits for it, so one message per socket is in
            # the room's inbox at a time (and a retried id finds the first one's answer)
            await hub.submit(conn.code, commands.intent_for(msg, conn, hub.settings, reply=conn))
            continue
        # out of the fan-out first: a seat that leaves must get its ack, not the removed
        # member's close
        await hub.detach(conn)
        answer = await hub.submit(conn.code, commands.intent_for(msg, conn, hub.settings))
        conn.send(dumps(answer))
        if answer["type"] == "ack":
            conn.close(Close.NORMAL)
            return
        await hub.attach(conn)
