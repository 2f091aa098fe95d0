"""This process's sockets, by room and player: whom a room's fan-out writes to.

A room's actor reads the sockets of its room here; the transport and the cluster's hub put and
take them. A player has one socket here at most: a newer hello replaces an older socket, which
closes with 4409.
"""

from __future__ import annotations

from typing import Any, Protocol

from app.core.protocol import Close


class RoomSocket(Protocol):
    """What a room needs of a player's socket (``app.transport.connection.Connection``)."""

    code: str
    player: str
    view: dict[str, Any] | None  # the last view sent (None: the next frame must be a welcome)
    public: dict[str, Any] | None  # the public game ``view`` was built from
    version: int
    closed: bool

    def send(self, text: str | bytes) -> None: ...

    def send_frames(self, frames: list[bytes]) -> None: ...

    def close(self, code: int = ..., reason: str = ...) -> None: ...


class LocalSockets(dict[str, dict[str, RoomSocket]]):
    """Room code -> player -> that player's socket on this process."""

    def put(self, sock: RoomSocket) -> None:
        """Make ``sock`` its player's socket in its room; an older one is closed (replaced)."""
        conns = self.setdefault(sock.code, {})
        old = conns.get(sock.player)
        conns[sock.player] = sock
        if old is not None and old is not sock:
            old.close(Close.REPLACED)

    def current(self, sock: RoomSocket) -> bool:
        """``sock`` is open and still its player's socket here."""
        return not sock.closed and self.get(sock.code, {}).get(sock.player) is sock

    def holds(self, code: str, player: str) -> bool:
        return self.get(code, {}).get(player) is not None

    def take(self, sock: RoomSocket) -> bool:
        """Forget ``sock``; True when it was its player's socket (not one replaced since). The
        room's entry goes with its last socket."""
        conns = self.get(sock.code)
        if not conns or conns.get(sock.player) is not sock:
            return False
        del conns[sock.player]
        if not conns:
            del self[sock.code]
        return True

    def count(self) -> int:
        return sum(len(conns) for conns in self.values())

    def close_all(self, code: int, reason: str = "") -> None:
        for conns in self.values():
            for sock in conns.values():
                if reason:
                    sock.close(code, reason)
                else:
                    sock.close(code)
