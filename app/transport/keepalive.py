"""A keepalive ping only for a socket that has gone quiet.

uvicorn pings every socket every ``WS_PING_INTERVAL_S`` to find half-open ones (a phone that lost
its network sends no close). The browser client already pings every 15 s (web/js/net.js), so for
it the server's pings said nothing new, and they were half of what an idle socket cost the server
(``python -m bench.city``: 35 -> 18 CPU-us per socket-second with them off). Here a socket heard
from within the interval is not pinged: the check is put off until the interval since it was last
heard has passed. A quiet one (a client that does not ping, or a dead phone) is pinged as before,
and closed when its pong does not come within ``WS_PING_TIMEOUT_S``.
"""

from __future__ import annotations

from typing import Any

from app.transport.asgi import WebSocketsSansIOProtocol, checked_version, uvicorn

# -- speed: a ping only for a quiet socket (docs/performance.md) -------------------------------------
#: what the subclass reads and calls of uvicorn's protocol (beside RawSocket.write_frames's)
KEEPALIVE_ATTRIBUTES = ("loop", "ping_interval", "ping_timer", "send_keepalive_ping", "data_received",
                        "schedule_ping")


def protocol_class() -> Any:
    """The WebSocket protocol for uvicorn's ``ws=``: :class:`QuietKeepalive` on a uvicorn release
    it was checked against (tests/app/test_socket.py fails outside it), else uvicorn's own by
    name."""
    if WebSocketsSansIOProtocol is None or uvicorn is None or not checked_version(uvicorn.__version__):
        return "websockets-sansio"
    if not all(hasattr(WebSocketsSansIOProtocol, name) for name in KEEPALIVE_ATTRIBUTES[3:]):
        return "websockets-sansio"
    return QuietKeepalive


if WebSocketsSansIOProtocol is not None:

    class QuietKeepalive(WebSocketsSansIOProtocol):  # type: ignore[misc,valid-type]
        """uvicorn's sans-I/O WebSocket protocol, whose keepalive skips a socket heard from
        within the ping interval."""

        heard_at = 0.0

        def data_received(self, data: bytes) -> None:
            self.heard_at = self.loop.time()
            super().data_received(data)

        def send_keepalive_ping(self) -> None:
            quiet_for = self.loop.time() - self.heard_at
            interval = self.ping_interval
            if interval and quiet_for < interval:
                self.ping_timer = self.loop.call_later(interval - quiet_for, self.send_keepalive_ping)
                return
            super().send_keepalive_ping()
else:  # pragma: no cover - uvicorn without its sans-I/O protocol
    QuietKeepalive = None  # type: ignore[assignment,misc]
# -- end of speed ---------------------------------------------------------------------------------
