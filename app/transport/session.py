"""``/ws/{code}``: hello with a token, then typed messages in, acks/errors/patches out.

The seat comes from the token presented in ``hello`` and is bound to the socket; no message
can name another seat. Every frame passes the socket's gate first (app/transport/gate.py); within
its limits every message but ``ping`` gets exactly one ``ack`` or ``error``. The per-address
limits (app/processes/limits.py) are applied at the handshake and at the hello.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from urllib.parse import urlsplit

from redis.exceptions import RedisError
from starlette.websockets import WebSocketState

from app.core.codes import normalize_code, token_hash
from app.core.protocol import BadMessage, Close, Err, dumps, parse_json, parse_message
from app.rooms import commands
from app.rooms.intent import error
from app.transport.admission import Admission, Busy
from app.transport.asgi import RawSocket
from app.transport.connection import Connection
from app.transport.gate import PONG_TEXT, YIELD_EVERY, Gate, Verdict, gate, notice, seconds
from app.transport.parts import SocketParts

log = logging.getLogger("mercyless.ws")


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _site(scheme: str, netloc: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a web origin, the port filled in from the scheme; None when it
    is not one."""
    try:
        parts = urlsplit(f"{scheme}://{netloc}")
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    return scheme, host, port if port is not None else _DEFAULT_PORTS[scheme]


def _origin_site(origin: str) -> tuple[str, str, int] | None:
    scheme, sep, rest = origin.strip().partition("://")
    if not sep or "/" in rest.rstrip("/"):
        return None
    return _site(scheme.lower(), rest.rstrip("/"))


def origin_allowed(ws: RawSocket, allowed: list[str]) -> bool:
    """A browser may open a game socket from the page's own site (scheme, host and port: the
    page's scheme is the socket's, ws -> http and wss -> https, as uvicorn sets it from
    X-Forwarded-Proto behind a proxy it trusts) or from an origin in ``allowed``."""
    origin = ws.headers.get("origin")
    if origin is None:  # not a browser: the token is the credential
        return True
    if "*" in allowed or origin in allowed:
        return True
    site = _origin_site(origin)
    if site is None:
        return False
    if any(_origin_site(other) == site for other in allowed):
        return True
    page_scheme = "https" if ws.scope.get("scheme") in ("wss", "https") else "http"
    return site == _site(page_scheme, ws.headers.get("host", ""))


async def serve(ws: RawSocket, parts: SocketParts, code: str) -> None:
    """One player's socket on ``/ws/{code}``, from the handshake to the close (app.main routes
    it here ahead of FastAPI's router: see app.transport.asgi). ``parts.admission`` bounds the
    work before its welcome (app/transport/admission.py)."""
    settings = parts.settings
    if not origin_allowed(ws, settings.allowed_origins):
        await ws.close(Close.POLICY)
        return
    ip = ws.client_host
    limits = parts.limits
    if limits.blocked_here(ip) or not limits.open_socket(ip):  # (refused: HTTP 403, no Redis)
        await ws.close(Close.TRY_AGAIN_LATER)
        return
    admission = parts.admission
    try:
        room_code = normalize_code(code)
        relay = parts.rooms.relay
        home = None
        async with admission.turn(last=False):
            # an address that flooded, or failed too many joins, as any process found it
            if not await limits.admit(ip):
                await ws.close(Close.TRY_AGAIN_LATER)
                return
            if relay is not None and room_code is not None:
                try:
                    home = await relay.home_of(room_code)
                except RedisError:
                    home = None  # served here: the hello meets the same outage and says so
        if relay is not None and home is not None and await relay.serve(ws, room_code, home):  # type: ignore[arg-type]
            return
        await session(ws, parts, code, admission)
    except Busy as busy:  # accepted, so that the client reads the close and its hint
        with contextlib.suppress(Exception):
            if ws.application_state == WebSocketState.CONNECTING:
                await ws.accept()
            await ws.close(Close.TRY_AGAIN_LATER, busy.reason())
    finally:
        limits.close_socket(ip)


#: no bound (a relayed socket's home: the relaying process bounded it)
_UNBOUNDED = Admission(0, 0)


async def session(ws: RawSocket, parts: SocketParts, code: str, admission: Admission = _UNBOUNDED) -> None:
    """The socket's whole session on this process: hello, then its messages until it closes
    (``ws`` may be one relayed from another process, app/transport/relay.py). Its hello waits
    its turn in ``admission`` (:class:`Busy` when the queue is full)."""
    settings = parts.settings
    limits = parts.limits
    ip = ws.client_host
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
    if room_code is None or token is None:  # a failed join, as an unknown room or token is
        await limits.join_failed(ip)
        await ws.close(Close.NO_ROOM if room_code is None else Close.BAD_TOKEN)
        return
    digest = token_hash(token)
    if not await limits.hello_allowed(ip, digest):  # a reconnect loop: the client backs off
        await ws.close(Close.TRY_AGAIN_LATER)
        return
    conn = Connection(ws, room_code, "", outbox_limit=settings.outbox_limit,
                      send_timeout_s=settings.send_timeout_s)
    async with admission.turn():
        rooms = parts.rooms
        hello = commands.command("hello", conn, digest, rooms.sockets, rooms.node_id)
        answer = await rooms.submit(room_code, hello)
    if answer["type"] == "error":
        if answer["code"] in FAILED_JOINS:
            await limits.join_failed(ip)
        conn.close(Close.NO_ROOM if answer["code"] == Err.ROOM_NOT_FOUND else
                   Close.TRY_AGAIN_LATER if answer["code"] == Err.UNAVAILABLE else Close.BAD_TOKEN)
        await parts.rooms.detach(conn)  # registered if the hello ran but its commit failed
        await conn.wait_closed()
        return
    await parts.quotas.room_opened(room_code, parts.clock.now_ms())  # counted against MAX_ROOMS
    # the player's message bucket, shared by their sockets here: a reconnect brings no new burst
    clock = seconds(parts.clock.speed)
    door = gate(settings, limits.bucket(f"{room_code}:{conn.player}", settings.rate_burst,
                                        settings.rate_per_s, clock), clock)
    await parts.rooms.attach(conn)  # subscribe to other processes' commits
    try:
        await _read_loop(parts, conn, door)
    finally:
        conn.close()
        if parts.rooms.leaving or settings.drop_delay_ms <= 0:  # (the process is going away: now)
            await _drop(parts, conn)
        else:
            _drop_later(parts, conn, settings.drop_delay_ms)
        await conn.wait_closed()  # the last frames and the close frame go out first


#: hello answers that count as failed joins (as an HTTP join to an unknown room does)
FAILED_JOINS = frozenset([Err.ROOM_NOT_FOUND, "bad_token"])
_later: set[asyncio.Task[None]] = set()  # drops waiting for their delay (held: tasks are weak)


async def _drop(parts: SocketParts, conn: Connection) -> None:
    """``conn`` is gone: out of the fan-out, and its player disconnected unless a newer socket
    of theirs said hello here meanwhile."""
    rooms = parts.rooms
    if await rooms.detach(conn):
        await rooms.submit(conn.code, commands.command("drop", conn, rooms.sockets, rooms.node_id))


def _drop_later(parts: SocketParts, conn: Connection, delay_ms: float) -> None:
    """Drop ``conn`` after ``delay_ms`` (of the server's clock). Until then the closed socket
    stays its player's here (it is sent nothing; the room stays listed under this process, so
    if the process dies the others still mark the player disconnected), and a hello of the
    player replaces it without a change to the room: a connection that flaps makes no
    disconnected/reconnected pair."""
    async def later() -> None:
        await parts.clock.sleep_ms(delay_ms)
        if parts.rooms.leaving:  # its stop marks every player it holds disconnected
            return
        try:
            await _drop(parts, conn)
        except Exception:
            log.exception("drop failed", extra={"room": conn.code})

    task = asyncio.get_running_loop().create_task(later())
    _later.add(task)
    task.add_done_callback(_later.discard)


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


async def _read_loop(parts: SocketParts, conn: Connection, door: Gate) -> None:
    """The socket's messages until it closes. Every frame passes the gate first: one past the
    limit costs a counter and nothing else."""
    ws = conn.ws
    limit = parts.settings.max_frame_bytes
    while not conn.closed:
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return
        frame = message.get("text")
        if frame is None:
            frame = message.get("bytes") or b""
        verdict = door.admit(frame)
        if verdict is not Verdict.MESSAGE:
            if verdict is Verdict.PING:
                conn.send(PONG_TEXT)
            elif verdict is Verdict.NOTICE:
                conn.send(notice(frame))
            elif verdict is Verdict.FLOOD:
                log.warning("socket flooded: closed, its address slowed", extra={"room": conn.code})
                conn.close(Close.POLICY)
                await parts.limits.flooded(ws.client_host)
            elif door.over % YIELD_EVERY == 0:
                await asyncio.sleep(0)  # (the other rooms' turn)
            continue
        if len(frame) > limit:
            conn.send(dumps(error(None, Err.TOO_LARGE, f"frames are at most {limit} bytes")))
            conn.close(Close.TOO_LARGE)
            return
        if type(frame) is bytes:
            try:
                frame = frame.decode("utf-8")
            except UnicodeDecodeError:
                conn.send(dumps(error(None, Err.BAD_MESSAGE, "frames are UTF-8 JSON")))
                continue
        try:
            raw = parse_json(frame)
        except BadMessage as bad:
            conn.send(dumps(error(None, bad.code, bad.message)))
            continue
        if isinstance(raw, dict) and raw.get("type") == "ping":  # a ping with more in it
            conn.send(PONG_TEXT)
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
            await parts.rooms.submit(conn.code, commands.intent_for(msg, conn, parts.settings, reply=conn))
            continue
        # out of the fan-out first: a seat that leaves must get its ack, not the removed
        # member's close
        await parts.rooms.detach(conn)
        answer = await parts.rooms.submit(conn.code, commands.intent_for(msg, conn, parts.settings))
        conn.send(dumps(answer))
        if answer["type"] == "ack":
            conn.close(Close.NORMAL)
            return
        await parts.rooms.attach(conn)
