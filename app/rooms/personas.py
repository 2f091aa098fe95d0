"""Who a bot is: a name from a list and the colour of its avatar (issue #25 "bots with
personality").

The names read the same in English and Dutch (the client's two languages), so a bot's name is
stored and sent like a person's, in every event, log and replay, and never needs translating;
the client translates only the "bot" wording and the level. Each name has its own hue, so bots
with different names (every bot of a room has its own) have different colours.

A new bot's name is a pure function of the room: its code orders the list (a hash, not the
global RNG), and the bot gets the free name whose hue lies farthest from the hues of the bots
already seated, so a room's colours are spread round the wheel. A free name is one no member of
the room (seat or spectator, case folded) goes by.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from app.core.codes import name_key

#: the names, A to Z (so a room's avatars, which show a name's first letter, differ too), each
#: with its hue: 24 names, 15 degrees apart
NAMES = ("Ada", "Bram", "Cleo", "Dex", "Eva", "Finn", "Gus", "Hanna", "Ivo", "Juno", "Kai", "Lola",
         "Milo", "Nora", "Otto", "Pip", "Quinn", "Rosa", "Sam", "Tess", "Vince", "Wim", "Yara", "Zoe")
HUES = {name: (i * 7 % len(NAMES)) * 15 for i, name in enumerate(NAMES)}  # neighbours apart


def _gap(hue: int, used: Iterable[int]) -> int:
    """How far ``hue`` lies from the nearest of ``used`` round the wheel (360: none used)."""
    return min((min(abs(hue - u), 360 - abs(hue - u)) for u in used), default=360)


def pick_name(code: str, members: Iterable[str], bots: Iterable[str]) -> str:
    """A new bot's name in room ``code``: not one of ``members``' names (case folded), its hue
    farthest from those of ``bots`` (the names of the room's bots), ties broken by the room's
    own order of the list. ``Bot N`` once every name is taken (a room holds 10 seats, but
    spectators' names count too)."""
    taken = {name_key(m) for m in members}
    used = [HUES[b] for b in bots if b in HUES]
    order = sorted(NAMES, key=lambda n: hashlib.sha256(f"{code}:{n}".encode()).digest())
    free = [n for n in order if name_key(n) not in taken]
    if free:
        return max(free, key=lambda n: _gap(HUES[n], used))  # max keeps the first of equals
    n = 1
    while name_key(f"Bot {n}") in taken:
        n += 1
    return f"Bot {n}"


def hue(player: str, name: str) -> int | None:
    """The avatar hue of seat ``player`` named ``name``: a bot's (ids starting with ``b``, named
    from the list), else None (the client derives a person's from their id)."""
    return HUES.get(name) if player.startswith("b") else None
