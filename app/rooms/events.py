"""What happens to a room around the rules: people come and go, the host changes the room,
players chat and react (protocol.md "EVENT").

The engine's :class:`~engine.Event` carries these too; its ``kind`` is one of the engine's
:class:`~engine.EventKind` (what the rules did) or one of these, and the wire sees only the
value. They live here, not in the pure engine, because no rule makes or reads them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from engine import Event, EventKind


class RoomEventKind(StrEnum):
    JOINED = "joined"
    LEFT = "left"
    BOT_ADDED = "bot_added"
    REACTION = "reaction"
    DISCONNECTED = "disconnected"
    RECONNECTED = "reconnected"
    REPLACED_BY_BOT = "replaced_by_bot"
    # additions to protocol.md (allowed: "may add fields and message types")
    RULES_CHANGED = "rules_changed"  # the host changed the rules in the lobby
    LOBBY = "lobby"  # the host took the room back to the lobby after a round
    ROOM_CHANGED = "room_changed"  # the host locked or unlocked the room, or readmitted removed players
    BOT_LEVEL = "bot_level"  # the host changed a bot's level (in the lobby or between rounds)
    CHAT = "chat"  # a quick-chat phrase, by its id (app.core.protocol.CHAT_PHRASES)
    MUTED = "muted"  # the host muted a player's quick chat, or unmuted it
    NIGHT_OVER = "night_over"  # the host ended the night: every screen shows its story


_KINDS: dict[str, StrEnum] = {**{k.value: k for k in EventKind}, **{k.value: k for k in RoomEventKind}}


def event_kind(value: str) -> StrEnum:
    """The kind named ``value`` on the wire, of either family (``ValueError`` if none)."""
    try:
        return _KINDS[value]
    except KeyError:
        raise ValueError(f"no event kind {value!r}") from None


def room_event(kind: RoomEventKind, **data: Any) -> Event:
    """A public event of the room (no secret part, no owner)."""
    return Event(kind, data)
