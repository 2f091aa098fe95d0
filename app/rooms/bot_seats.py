"""The bots that play a room's bot seats: one per seat and round, each seeing only its seat's
view of what happened (engine.ai).

A bot's move is decided here, on the event loop, only when that is quick (``easy``, ``normal``,
or ``hard`` with the small in-loop budget when no worker pool is there); otherwise
:func:`thought` packs what the bot would read into an ``engine.ai.think.Thought`` for a worker
process. Either way the randomness comes from a seed made of the game's seed, the room's version
and the seat, so the same room at the same version gets the same draws.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from app.core.settings import Settings
from app.rooms.model import LOBBY, Loaded
from engine import Action, Event, make_rules, view_for
from engine.ai import Bot, make_bot
from engine.ai.think import Thought

#: the levels whose move may take longer than a millisecond (a search): a worker makes it
SEARCHING = frozenset({"hard"})

#: (room, player) -> (the deal's seed, level, the bot playing that seat). A bot remembers what
#: its seat saw this round (engine.ai.Memory); a process that did not see every commit of the
#: round (a restart, another process's commits) plays on with what it has: the view alone is
#: enough for a legal move.
_BOTS: dict[tuple[str, str], tuple[str, str, Bot]] = {}


def bot_for(loaded: Loaded, player: str, level: str, settings: Settings) -> Bot:
    """The seat's bot for this deal and level: a new one for each deal (the round number alone
    comes back as 1 in a new match, whose rules may have changed)."""
    room = loaded.room
    key = (room.code, player)
    deal = loaded.game.seed if loaded.game is not None else f"round {room.round}"
    cached = _BOTS.get(key)
    if cached is None or cached[0] != deal or cached[1] != level:
        # on the loop, the wall clock bounds the search: that is what the other rooms wait
        options = {"budget_ms": settings.bot_inline_budget_ms, "clock": "wall"} if level in SEARCHING else {}
        bot = make_bot(level, player, make_rules(room.rules), **options)
        if len(_BOTS) > 4096:
            _BOTS.clear()
        _BOTS[key] = cached = (deal, level, bot)
    return cached[2]


def observe(loaded: Loaded, events: list[Event], settings: Settings) -> None:
    """Every bot seat of the room sees its own copy of what just happened."""
    if loaded.room.status == LOBBY or not events:
        return
    for seat in loaded.room.seats:
        if seat.bot:
            bot_for(loaded, seat.id, seat.bot, settings).observe([e.to_wire(seat.id) for e in events])


def seed(loaded: Loaded, player: str, what: str) -> str:
    """The seed of ``player``'s draws for ``what`` in the room as it is now."""
    game = loaded.game
    return f"{game.seed if game is not None else loaded.room.code}:{loaded.room.version}:{player}:{what}"


def _view(loaded: Loaded, player: str, now_ms: int) -> dict[str, Any]:
    assert loaded.game is not None
    view = view_for(loaded.game, player, None, now_ms)
    # bots catch through timers._catch_due, after a human-like delay, never as a turn's move
    view["game"]["legal"] = {**view["game"]["legal"], "catch": []}  # views are read-only
    return view


def decide_here(loaded: Loaded, player: str, level: str, now_ms: int, settings: Settings) -> Action | None:
    """``player``'s move, decided on the event loop (a search gets the in-loop budget)."""
    bot = bot_for(loaded, player, level, settings)
    return bot.decide(_view(loaded, player, now_ms), random.Random(seed(loaded, player, "move")))


def thought(loaded: Loaded, player: str, level: str, now_ms: int, settings: Settings,
            budget_ms: float) -> Thought:
    """What a worker needs to make ``player``'s move: the seat's view and a copy of its bot's
    memory, brought up to that view first (as the bot's own ``decide`` would), so the bot here
    remembers the same as if it had decided itself."""
    bot = bot_for(loaded, player, level, settings)
    view = _view(loaded, player, now_ms)
    memory = getattr(bot, "memory", None)
    if memory is not None:
        memory.sync(view)
        memory = copy.deepcopy(memory)
    assert loaded.game is not None
    return Thought(level, player, loaded.game.rules, memory, view,
                   seed(loaded, player, "move"), budget_ms)
