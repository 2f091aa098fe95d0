"""What every HTTP request meets before the app: the security headers on every answer, a bound
on the body (``MAX_BODY_BYTES``), the Host allow-list (``ALLOWED_HOSTS``), and, in uvicorn's
protocol, bounds on the time a request may take to arrive (``REQUEST_READ_TIMEOUT_S``), on the
size of its head (``MAX_HEADER_BYTES``) and on the connections whose first head has not come
(``PENDING_HANDSHAKES_PER_IP``, ``MAX_PENDING_HANDSHAKES``).

Game sockets are answered before this (app.main ``MercylessApp.__call__``, which asks
:meth:`HttpEdge.host_allowed` first); their handshake still passes :class:`GuardedHttpProtocol`,
which lets go of the connection once its head is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.core.addresses import HostAllowList

log = logging.getLogger("mercyless.edge")

#: The browser client is files of its own origin only: no inline script, style attribute, eval,
#: frame or plug-in. Styles set from JavaScript through the CSSOM (``el.style.x``) are allowed;
#: ``style=`` in markup is not. ``connect-src 'self'`` covers the same host's ws:/wss:. ``blob:``
#: images are the card faces the client draws itself (web/js/card-art.js): only this origin's
#: scripts can make a blob: URL of this origin.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")

#: Every answer: no MIME sniffing, never framed (clickjacking), and no Referer leaving the site
#: (invite links carry the room's code in their path).
COMMON_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)

#: Pages that load their scripts from a CDN and inline (FastAPI's /docs and /redoc, served only
#: with API_DOCS=true): every header but the CSP.
CSP_EXEMPT = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})

#: Probes pass whatever their Host: a balancer's or an orchestrator's health check names the
#: backend as it likes, and these answers give a page nothing to read.
HOST_EXEMPT = frozenset({"/healthz", "/readyz"})
BAD_HOST = ("bad_host", "this server does not answer to this host name: open it at its own address, "
            "or add the name to ALLOWED_HOSTS")


class BodyTooLarge(HTTPException):
    """A body that grew past ``MAX_BODY_BYTES`` while it was read (raised from ``receive``)."""

    def __init__(self) -> None:
        super().__init__(413, "request body too large", headers={"connection": "close"})


def _json_error(status: int, code: str, message: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    body = b'{"error":{"code":"%s","message":"%s"}}' % (code.encode(), message.encode())
    return [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"connection", b"close")], body


class HttpEdge:
    """ASGI wrapper of the app's HTTP requests: adds the security headers to every answer
    (errors and 500s included), answers 400 ``bad_host`` to a Host not in ``hosts``, answers
    413 at once to a ``Content-Length`` over the limit, and counts a body sent without one
    (chunked) as it is read, refusing it past the limit."""

    def __init__(self, app: ASGIApp, max_body_bytes: int, hosts: HostAllowList | None = None) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.hosts = hosts
        self.headers = [*COMMON_HEADERS, (b"content-security-policy", CSP.encode())]
        self.headers_without_csp = list(COMMON_HEADERS)

    def host_allowed(self, scope: Scope) -> bool:
        if self.hosts is None:
            return True
        for name, value in scope["headers"]:
            if name == b"host":
                return self.hosts.allows(value.decode("latin-1"))
        return self.hosts.allows(None)

    @staticmethod
    async def refuse_socket(scope: Scope, send: Send) -> None:
        """Refuse a WebSocket's handshake for its Host, before it is accepted: 400 with the JSON
        error where the server can answer one (ASGI's ``websocket.http.response``, uvicorn's
        sans-I/O protocol), else the 403 every server makes of a close sent then."""
        if "websocket.http.response" in (scope.get("extensions") or {}):
            headers, body = _json_error(400, *BAD_HOST)
            await send({"type": "websocket.http.response.start", "status": 400,
                        "headers": [*headers, *COMMON_HEADERS]})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = self.headers_without_csp if scope["path"] in CSP_EXEMPT else self.headers
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        if scope["path"] not in HOST_EXEMPT and not self.host_allowed(scope):  # DNS rebinding
            await self._refuse(send_with_headers, 400, *BAD_HOST)
            return
        declared = _content_length(scope)
        if declared is None or declared > self.max_body_bytes:
            status, code, text = ((400, "bad_message", "bad Content-Length") if declared is None
                                  else (413, "too_large", "request body too large"))
            await self._refuse(send_with_headers, status, code, text)
            return
        received = 0

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise BodyTooLarge()
            return message

        try:
            await self.app(scope, counted_receive, send_with_headers)
        except BodyTooLarge:  # read by a part of the app that does not answer HTTP errors itself
            if started:
                raise
            await self._refuse(send_with_headers, 413, "too_large", "request body too large")

    @staticmethod
    async def _refuse(send: Send, status: int, code: str, message: str) -> None:
        headers, body = _json_error(status, code, message)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    """The declared body length (0 when none is declared), ``None`` when it is not a number
    (uvicorn's parser refuses most such requests before they get here)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                length = int(value)
            except ValueError:
                return None
            return length if length >= 0 else None
    return 0


# -- uvicorn's protocol: how long a request may take to arrive, and how large its head may be ------

_STATUS = {408: b"408 Request Timeout", 431: b"431 Request Header Fields Too Large"}
#: A cap that bites is logged at most this often (a line per cap, with what it closed meanwhile):
#: a flood of silent connections must not become a flood of log lines.
PENDING_LOG_EVERY_S = 5.0


def trusted_peers(forwarded_allow_ips: str) -> Callable[[str], bool]:
    """Whether a peer is one of ``FORWARDED_ALLOW_IPS`` (addresses and networks; ``*``: any), as
    uvicorn reads the setting; an entry that is no address (a Unix socket's path) names none."""
    entries = {entry.strip() for entry in forwarded_allow_ips.split(",") if entry.strip()}
    if "*" in entries:
        return lambda peer: True
    networks = []
    for entry in entries:
        with contextlib.suppress(ValueError):
            networks.append(ipaddress.ip_network(entry, strict=False))

    def trusted(peer: str) -> bool:
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(address in network for network in networks)

    return trusted


class PendingHandshakes:
    """The connections of a process whose first request head has not come yet. Each holds a file
    descriptor for up to ``REQUEST_READ_TIMEOUT_S`` while saying nothing: 1,100 of them from one
    address took every descriptor of a 1,024 limit and every new client got a reset. Counted per
    client network (``key``: the peer's address, its IPv6 /64; the head, and X-Forwarded-For
    with it, has not come) and in all; a connection past either cap is closed at once. Peers in
    ``FORWARDED_ALLOW_IPS`` (``trusted``) are proxies, many clients each: the total counts them."""

    def __init__(self, per_address: int, total: int, key: Callable[[str], str] = str,
                 trusted: Callable[[str], bool] = lambda peer: False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_address = per_address
        self.total = total
        self.key = key
        self.trusted = trusted
        self.clock = clock
        self.count = 0
        self.by_key: Counter[str] = Counter()
        self.closed = {"address": 0, "total": 0}  # since the cap's last log line
        self.logged_at = {"address": -math.inf, "total": -math.inf}

    def admit(self, peer: str | None) -> str | None:
        """Count a new connection from ``peer``: the key to :meth:`release` it by (``""``:
        counted in the total only), or ``None``: over a cap, to be closed."""
        key = "" if peer is None or self.trusted(peer) else self.key(peer)
        if key and self.per_address and self.by_key[key] >= self.per_address:
            self._bit("address", key)
            return None
        if self.total and self.count >= self.total:
            self._bit("total", key)
            return None
        self.count += 1
        if key:
            self.by_key[key] += 1
        return key

    def release(self, key: str) -> None:
        self.count -= 1
        if key:
            left = self.by_key.pop(key) - 1
            if left:
                self.by_key[key] = left

    def _bit(self, cap: str, key: str) -> None:
        self.closed[cap] += 1
        now = self.clock()
        if now - self.logged_at[cap] < PENDING_LOG_EVERY_S:
            return
        closed, self.closed[cap] = self.closed[cap], 0
        self.logged_at[cap] = now
        setting, limit = (("PENDING_HANDSHAKES_PER_IP", self.per_address) if cap == "address"
                          else ("MAX_PENDING_HANDSHAKES", self.total))
        log.warning("pending handshakes: %s=%d reached, %d connection(s) closed at once since the last "
                    "such line (%d pending from %s, %d in all)", setting, limit, closed,
                    self.by_key.get(key, 0), key or "a trusted proxy", self.count,
                    extra={"cap": setting, "limit": limit, "closed": closed, "address": key,
                           "pending_address": self.by_key.get(key, 0), "pending": self.count})


class GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with two bounds uvicorn does not have (0.55 times only the
    idle gap between requests, ``timeout_keep_alive``, and its httptools parser takes a head of
    any size): a request must arrive whole (line, headers and body) within ``read_timeout_s``
    of its first byte, the first request of a connection within that of connecting, or the
    connection is closed (408 when its head never came); and a head over ``max_header_bytes``
    gets 431 and the connection closed, counted as it arrives (a head that never ends) and
    once parsed. A connection counts in ``pending`` (:class:`PendingHandshakes`) until its
    first head is read, and one past its caps is closed as it is made. Made with
    :func:`guarded_protocol`. It reads uvicorn's ``transport``, ``loop``, ``parser``, ``url``,
    ``headers``, ``client`` and ``server_state``; ``tests/app/test_edge.py`` runs it against
    the installed uvicorn."""

    read_timeout_s: float = 10.0
    max_header_bytes: int = 16_384
    pending: PendingHandshakes | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_deadline: asyncio.TimerHandle | None = None
        self._in_head = False
        self._head_bytes = 0
        self._refused = False  # answered here: nothing more of the connection is read
        self._pending_key: str | None = None  # counted in ``pending`` under this key

    def _arm(self) -> None:
        if self._read_deadline is None:
            self._read_deadline = self.loop.call_later(self.read_timeout_s, self._read_timed_out)

    def _disarm(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._in_head = True
        if self.pending is not None:
            self._pending_key = self.pending.admit(self.client[0] if self.client else None)
            if self._pending_key is None:  # over a cap: no answer, the descriptor freed now
                self._refused = True
                transport.close()
                return
        self._arm()

    def _head_came(self) -> None:
        if self._pending_key is not None:
            self.pending.release(self._pending_key)  # type: ignore[union-attr]
            self._pending_key = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_came()
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > self.max_header_bytes:  # a head that never ends
            self._refuse(431, "Request headers too large.")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if not self._in_head:  # the next request on a kept-alive connection
            self._in_head = True
            self._head_bytes = 0
        self._arm()

    def on_headers_complete(self) -> None:
        self._head_came()  # (a WebSocket's handshake: before its own protocol takes the connection)
        self._in_head = False
        if self._refused:
            return
        head = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if head > self.max_header_bytes:
            self._refuse(431, "Request headers too large.")
            return
        if self.parser.should_upgrade() and self._should_upgrade():
            self._disarm()  # a WebSocket's handshake: its own protocol takes the connection over
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        if not self._refused:
            super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        if not self._refused:
            super().handle_websocket_upgrade()

    def _read_timed_out(self) -> None:
        self._read_deadline = None
        if self.transport.is_closing():
            return
        if self._in_head:
            self._refuse(408, "Request not received in time.")
        else:  # the body is late: the app reading it sees the client gone
            self.transport.close()

    def _refuse(self, status: int, text: str) -> None:
        self._disarm()
        if self._refused or self.transport.is_closing():
            return
        self._refused = True
        content = [b"HTTP/1.1 ", _STATUS[status], b"\r\n"]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend([b"content-type: text/plain; charset=utf-8\r\n",
                        b"content-length: ", str(len(text)).encode(), b"\r\n",
                        b"connection: close\r\n\r\n", text.encode()])
        self.transport.write(b"".join(content))
        self.transport.close()


def guarded_protocol(read_timeout_s: float, max_header_bytes: int,
                     pending: PendingHandshakes | None = None) -> type[GuardedHttpProtocol]:
    """The protocol class for uvicorn's ``http=`` with these bounds (``pending``: one count for
    every connection of the server)."""
    return type("GuardedHttpProtocol", (GuardedHttpProtocol,),
                {"read_timeout_s": read_timeout_s, "max_header_bytes": max_header_bytes, "pending": pending})
