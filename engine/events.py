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
    JOINED = "joined"
    LEFT = "left"
    BOT_ADDED = "bot_added"
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
    REACTION = "reaction"
    ROUND_OVER = "round_over"
    MATCH_OVER = "match_over"
    DISCONNECTED = "disconnected"
    RECONNECTED = "reconnected"
    REPLACED_BY_BOT = "replaced_by_bot"
    # additions to protocol.md (allowed: "may add fields and message types")
    PASSED = "passed"  # a player passed their turn
    CANCELLED = "cancelled"  # a pending colour/target play was withdrawn
    WINDOW_CLOSED = "window_closed"  # a catch window ran out; the player is safe
    TIMED_OUT = "timed_out"  # the server acts for a player whose turn time ran out
    RESHUFFLED = "reshuffled"  # discard pile and set-aside hands became the draw pile
    RULES_CHANGED = "rules_changed"  # the host changed the rules in the lobby
    LOBBY = "lobby"  # the host took the room back to the lobby after a round
    ROOM_CHANGED = "room_changed"  # the host locked or unlocked the room, or readmitted removed players
    BOT_LEVEL = "bot_level"  # the host changed a bot's level (in the lobby or between rounds)
    BOT_RENAMED = "bot_renamed"  # a newcomer had a bot's name: the bot took another
    CHAT = "chat"  # a quick-chat phrase, by its id (app.core.protocol.CHAT_PHRASES)
    MUTED = "muted"  # the host muted a player's quick chat, or unmuted it
    NIGHT_OVER = "night_over"  # the host ended the night: every screen shows its story


class Event(NamedTuple):
    kind: EventKind
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
