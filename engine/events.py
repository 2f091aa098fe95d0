"""Events: what happened, for logs and animation (protocol.md "EVENT").

An :class:`Event` has public ``data`` that every viewer may see and, for draws, ``secret`` data
(the drawn cards) that only its ``owner`` may see. :meth:`Event.to_wire` is the one place that
decides which copy a viewer gets.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple

from ._records import record_maker


class EventKind(StrEnum):
    """What the rules did. What happens around them (people come and go, the host changes the
    room, players chat) is the server's own family of kinds (app/rooms/events.py)."""

    STARTED = "started"
    PLAYED = "played"
    DREW = "drew"
    TOOK_STACK = "took_stack"
    COLOR = "color"
    SKIPPED = "skipped"
    REVERSED = "reversed"
    SWAPPED = "swapped"
    PASSED_HANDS = "passed_hands"
    DISCARDED = "discarded"
    ROULETTE = "roulette"
    UNO = "uno"
    EXPOSED = "exposed"
    CAUGHT = "caught"
    ELIMINATED = "eliminated"
    ROUND_OVER = "round_over"
    MATCH_OVER = "match_over"
    # additions to protocol.md (allowed: "may add fields and message types")
    PASSED = "passed"  # a player passed their turn
    CANCELLED = "cancelled"  # a pending colour/target play was withdrawn
    WINDOW_CLOSED = "window_closed"  # a catch window ran out; the player is safe
    TIMED_OUT = "timed_out"  # the server acts for a player whose turn time ran out
    RESHUFFLED = "reshuffled"  # discard pile and set-aside hands became the draw pile


class Event(NamedTuple):
    kind: StrEnum  # an EventKind, or a kind of the server's own (see EventKind)
    data: dict[str, Any]
    owner: str | None = None
    secret: dict[str, Any] | None = None

    def to_wire(self, viewer: str | None) -> dict[str, Any]:
        """This event as ``viewer`` may see it (``None``: a spectator)."""
        out = {"kind": self.kind.value, **self.data}
        if self.secret is not None and viewer is not None and viewer == self.owner:
            out.update(self.secret)
        return out

    def public(self) -> dict[str, Any]:
        """The copy every other player gets (used for public replays)."""
        return {"kind": self.kind.value, **self.data}


#: ``new_event((kind, data, owner, secret))``: an :class:`Event` from all four fields, at C speed
#: (see :func:`~engine._records.record_maker`): the rules build a few events on every move.
new_event = record_maker(Event)
