"""Who a bot is: a name from a list and the colour of its avatar (issue #25 "bots with
personality"), and the colour of everyone's avatar.

The names read the same in English and Dutch (the client's two languages), so a bot's name is
stored and sent like a person's, in every event, log and replay, and never needs translating;
the client translates only the "bot" wording and the level. Each name has its own hue, so bots
with different names (every bot of a room has its own) have different colours. A person's hue
comes from their id (as the client drew it before the view carried it).

A new bot's name is a pure function of the room: its code orders the list (a hash, not the
global RNG), and the bot gets the free name that, first, starts with a letter no seat's name
starts with (an avatar shows its name's first letter) and, then, whose hue lies farthest from
the hues of the seats already there, so a room's colours are spread round the wheel. A free name
is one no member of the room (seat or spectator, case folded) goes by.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable

from app.core.codes import name_key

#: the names, A to Z, each with its hue: 24 names, 15 degrees apart, neighbours in the
#: alphabet 105 degrees apart
NAMES = ("Ada", "Bram", "Cleo", "Dex", "Eva", "Finn", "Gus", "Hanna", "Ivo", "Juno", "Kai", "Lola",
         "Milo", "Nora", "Otto", "Pip", "Quinn", "Rosa", "Sam", "Tess", "Vince", "Wim", "Yara", "Zoe")
HUES = {name: (i * 7 % len(NAMES)) * 15 for i, name in enumerate(NAMES)}


def _gap(hue: int, used: Iterable[int]) -> int:
    """How far ``hue`` lies from the nearest of ``used`` round the wheel (360: none used)."""
    return min((min(abs(hue - u) % 360, 360 - abs(hue - u) % 360) for u in used), default=360)


def _initial(name: str) -> str:
    """The first letter as a reader sees it (name_key would read an "M" as "rn")."""
    return unicodedata.normalize("NFKC", name).casefold()[:1]


def pick_name(code: str, members: Iterable[str], seats: Iterable[tuple[str, str]]) -> str:
    """A new bot's name in room ``code``: not one of ``members``' names (case folded); of
    those, one whose first letter no seat's name has, if any; of those, the one whose hue lies
    farthest from the hues of ``seats`` ((id, name) of each), ties broken by the room's own
    order of the list. ``Bot N`` once every name is taken (a room holds 10 seats, but
    spectators' names count too)."""
    seats = list(seats)
    taken = {name_key(m) for m in members}
    used = [hue(pid, name) for pid, name in seats]
    initials = {_initial(name) for _, name in seats}
    order = sorted(NAMES, key=lambda n: hashlib.sha256(f"{code}:{n}".encode()).digest())
    free = [n for n in order if name_key(n) not in taken]
    if free:
        # max keeps the first of equals
        return max(free, key=lambda n: (_initial(n) not in initials, _gap(HUES[n], used)))
    n = 1
    while name_key(f"Bot {n}") in taken:
        n += 1
    return f"Bot {n}"


def hue(player: str, name: str) -> int:
    """The avatar hue of seat ``player`` named ``name``: a bot's (ids starting with ``b``) from
    its name, if from the list; a person's (or a bot's named otherwise) from their id, as the
    client drew it before the view carried it: ``h = h * 31 + code`` over the id's characters,
    in 32 bits, modulo 360."""
    if player.startswith("b") and name in HUES:
        return HUES[name]
    h = 0
    for ch in player:
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    return h % 360
