"""The end of the night (issue #47.2): after a round the host says the night is over, and every
phone and the big screen show the night's story (web/js/story.js) until a next round is dealt."""

from __future__ import annotations

from app.core.protocol import Err
from app.rooms.events import RoomEventKind, room_event
from app.rooms.model import MATCH_OVER, ROUND_OVER, Loaded
from app.rooms.outcomes import NoChange, Refused
from engine import Event


def end_night(loaded: Loaded, player: str) -> list[Event]:
    """The host ends the night after a round or a match (``not_over`` while a round plays or in
    the lobby). Said twice, it changes nothing."""
    room = loaded.room
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can do that")
    if room.status not in (ROUND_OVER, MATCH_OVER):
        raise Refused(Err.NOT_OVER, "the night ends after a round")
    if room.night_over:
        raise NoChange
    room.night_over = True
    return [room_event(RoomEventKind.NIGHT_OVER, by=player)]
