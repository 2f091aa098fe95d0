"""What a room's actor does, one at a time: intents, and the answers they give (``ack`` and
``error`` as protocol.md words them)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from app.core.protocol import dumps
from app.rooms.model import Loaded
from app.rooms.outcomes import NoChange
from app.rooms.sockets import RoomSocket
from engine import Event

Run = Callable[[Loaded, int], list[Event]]


class Intent:
    """Something to do to a room. ``run`` raises ``Refused`` or returns the events.

    The answer (an ack or an error) resolves the future ``done`` for whoever waits on it. With a
    ``reply`` socket (the one the message came in on) the actor also sends it there as soon as
    it is known, a changed room's ack in the same write as that socket's patch; the reader that
    waits on ``done`` then has nothing left to send."""

    __slots__ = ("answer_field", "created", "done", "kind", "msg_id", "remote", "reply", "run")

    def __init__(self, kind: str, run: Run, msg_id: str | None = None, player: str | None = None,
                 reply: RoomSocket | None = None) -> None:
        self.kind = kind
        self.run = run
        self.msg_id = msg_id
        self.answer_field = f"{player}:{msg_id}" if msg_id is not None and player is not None else ""
        self.reply = reply
        self.done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.remote: tuple[int, list[Event], dict[str, Any] | None] | None = None
        self.created = time.perf_counter()

    def resolve(self, answer: dict[str, Any]) -> None:
        """Give the answer, once (a later one, as after a bug past the answer, is dropped)."""
        if self.done.done():
            return
        if self.reply is not None:  # (None: sent already, behind the patch)
            self.reply.send(dumps(answer))
            self.reply = None
        self.done.set_result(answer)


def no_change(loaded: Loaded, now: int) -> list[Event]:
    raise NoChange


def ack(msg_id: str | None) -> dict[str, Any]:
    return {"type": "ack", "id": msg_id}


def error(msg_id: str | None, code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "id": msg_id, "code": str(code), "message": message}
