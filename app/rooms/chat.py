"""Quick chat (issue #47): a small fixed set of phrases, sent as ids and said by each reader's
client in the reader's language, so there is no free text to moderate; and the host's mute.

Like reactions (``lobby.react``), a phrase is an event and nothing else of the room changes but
the sender's last-chat time (its rate limit, ``CHAT_INTERVAL_MS``). Seated players and people
watching may chat; a big screen (``/tv/CODE``) only watches. Each function checks everything
first and raises :class:`~app.rooms.outcomes.Refused` (nothing changed), as lobby.py's do.
"""

from __future__ import annotations

from app.core.protocol import CHAT_PHRASES, Err
from app.rooms.events import RoomEventKind, room_event
from app.rooms.model import Loaded, Room, Seat, Spectator
from app.rooms.outcomes import NoChange, Refused
from engine import Event


def _member(room: Room, player: str) -> Seat | Spectator | None:
    return room.seat(player) or room.spectator(player)


def chat(loaded: Loaded, player: str, phrase: str, now_ms: int, interval_ms: int) -> list[Event]:
    """``player`` says ``phrase`` (an id of CHAT_PHRASES) to the room."""
    room = loaded.room
    member = _member(room, player)
    if member is None:
        raise Refused(Err.BAD_MESSAGE, "not in this room")
    if isinstance(member, Spectator) and member.screen:
        raise Refused(Err.SPECTATOR, "a big screen only watches")
    if phrase not in CHAT_PHRASES:
        raise Refused(Err.BAD_PHRASE, f"phrase must be one of {', '.join(CHAT_PHRASES)}")
    if player in room.muted:
        raise Refused(Err.MUTED, "the host muted your chat")
    last = room.last_chat.get(player)
    if last is not None and now_ms - last < interval_ms:
        raise Refused(Err.RATE_LIMITED, f"one phrase every {interval_ms / 1000:g} s")
    room.last_chat[player] = now_ms
    return [room_event(RoomEventKind.CHAT, player=player, phrase=phrase)]


def mute(loaded: Loaded, player: str, target: str, muted: bool) -> list[Event]:
    """The host mutes ``target``'s chat (``muted``) or unmutes it. Asking for what already is
    is acknowledged and changes nothing, as ``set_room``."""
    room = loaded.room
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can do that")
    member = _member(room, target)
    if member is None:
        raise Refused(Err.BAD_MESSAGE, "no such player")
    if isinstance(member, Seat) and member.bot is not None and not member.away:
        raise Refused(Err.BAD_MESSAGE, "a bot does not chat")
    if isinstance(member, Spectator) and member.screen:
        raise Refused(Err.BAD_MESSAGE, "a big screen does not chat")
    # a host may lift a mute put on them before they held the role, never put one on themselves
    if target == player and muted:
        raise Refused(Err.BAD_MESSAGE, "the host cannot mute themselves")
    if (target in room.muted) == muted:
        raise NoChange
    # a new list, never changed in place: the views sent last hold the old one
    room.muted = [*room.muted, target] if muted else [m for m in room.muted if m != target]
    return [room_event(RoomEventKind.MUTED, player=target, muted=muted, by=player)]
