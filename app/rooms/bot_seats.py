"""The bots that play a room's bot seats: one per seat and round, each seeing only its seat's
view of what happened (engine.ai)."""

from __future__ import annotations

from app.core.settings import Settings
from app.rooms.model import LOBBY, Loaded
from engine import Event, make_rules
from engine.ai import Bot, make_bot

#: (room, player) -> (round, the bot playing that seat). A bot remembers what its seat saw
#: this round (engine.ai.Memory); a process that did not see every commit of the round (a
#: restart, another process's commits) plays on with what it has: the view alone is enough for
#: a legal move.
_BOTS: dict[tuple[str, str], tuple[int, str, Bot]] = {}


def bot_for(loaded: Loaded, player: str, level: str, settings: Settings) -> Bot:
    room = loaded.room
    key = (room.code, player)
    cached = _BOTS.get(key)
    if cached is None or cached[0] != room.round or cached[1] != level:
        options = {"budget_ms": settings.hard_bot_budget_ms} if level == "hard" else {}
        bot = make_bot(level, player, make_rules(room.rules), **options)
        if len(_BOTS) > 4096:
            _BOTS.clear()
        _BOTS[key] = cached = (room.round, level, bot)
    return cached[2]


def observe(loaded: Loaded, events: list[Event], settings: Settings) -> None:
    """Every bot seat of the room sees its own copy of what just happened."""
    if loaded.room.status == LOBBY or not events:
        return
    for seat in loaded.room.seats:
        if seat.bot:
            bot_for(loaded, seat.id, seat.bot, settings).observe([e.to_wire(seat.id) for e in events])
