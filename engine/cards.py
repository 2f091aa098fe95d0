"""Cards of UNO Show 'em No Mercy (rules.md, "Cards").

A card is the short string ``COLOR-KIND`` (``r-7``, ``g-draw2``, ``w-roulette``); two copies of
the same card are the same string, so hands and piles are lists of codes and conservation is a
multiset check. Everything the rules need to know about a code sits in :data:`CARD_INFO`, built
once, so the hot paths do one dict lookup per card.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import NamedTuple


class Color(StrEnum):
    """Card colours; the value is the wire name, :attr:`letter` the code prefix."""

    RED = "red"
    YELLOW = "yellow"
    GREEN = "green"
    BLUE = "blue"

    @property
    def letter(self) -> str:
        return self.value[0]


#: Colour letters in the rules' tie-break order (``red yellow green blue``).
COLOR_LETTERS: tuple[str, ...] = ("r", "y", "g", "b")
LETTER_TO_NAME: dict[str, str] = {c.letter: c.value for c in Color}
NAME_TO_LETTER: dict[str, str] = {c.value: c.letter for c in Color}
WILD = "w"


class Kind(StrEnum):
    """What a card does; the value is the part of the code after the dash (numbers are digits)."""

    NUMBER = "number"
    DRAW2 = "draw2"
    DRAW4 = "draw4"
    SKIP = "skip"
    SKIP_ALL = "skipall"
    REVERSE = "reverse"
    DISCARD_ALL = "discard"
    REVERSE4 = "reverse4"
    DRAW6 = "draw6"
    DRAW10 = "draw10"
    ROULETTE = "roulette"
    WILD = "wild"


COLORED_ACTIONS: dict[str, Kind] = {
    k.value: k
    for k in (Kind.DRAW2, Kind.DRAW4, Kind.SKIP, Kind.SKIP_ALL, Kind.REVERSE, Kind.DISCARD_ALL)
}
WILD_KINDS: dict[str, Kind] = {
    k.value: k for k in (Kind.REVERSE4, Kind.DRAW6, Kind.DRAW10, Kind.ROULETTE, Kind.WILD)
}
DRAW_VALUES: dict[Kind, int] = {
    Kind.DRAW2: 2, Kind.DRAW4: 4, Kind.REVERSE4: 4, Kind.DRAW6: 6, Kind.DRAW10: 10}


class CardInfo(NamedTuple):
    """Facts about one card code.

    ``symbol`` is what "same symbol" and "same number" compare: the digit for numbers, the kind
    for coloured actions, ``None`` for wilds (a wild is always playable, so it never needs it).
    """

    code: str
    color: str  # colour letter, or "w" for wilds
    kind: Kind
    number: int | None
    symbol: str | None
    draw: int  # draw value on a stack; 0 when the card is not a draw card
    points: int
    wild: bool


def _info(code: str) -> CardInfo | None:
    color, sep, rest = code.partition("-")
    if not sep:
        return None
    if color in COLOR_LETTERS:
        if len(rest) == 1 and rest.isdigit():
            return CardInfo(code, color, Kind.NUMBER, int(rest), rest, 0, int(rest), False)
        kind = COLORED_ACTIONS.get(rest)
        if kind is None:
            return None
        return CardInfo(code, color, kind, None, rest, DRAW_VALUES.get(kind, 0), 20, False)
    if color == WILD:
        kind = WILD_KINDS.get(rest)
        if kind is None:
            return None
        return CardInfo(code, WILD, kind, None, None, DRAW_VALUES.get(kind, 0), 50, True)
    return None


def _all_codes() -> list[str]:
    codes = [f"{c}-{n}" for c in COLOR_LETTERS for n in range(10)]
    codes += [f"{c}-{k}" for c in COLOR_LETTERS for k in COLORED_ACTIONS]
    codes += [f"{WILD}-{k}" for k in WILD_KINDS]
    return codes


#: Every card code the game knows, with its facts.
CARD_INFO: dict[str, CardInfo] = {code: info for code in _all_codes() if (info := _info(code))}


def card_info(code: object) -> CardInfo | None:
    """The facts of ``code``, or ``None`` when it is not a card code."""
    return CARD_INFO.get(code) if isinstance(code, str) else None


def _standard_deck() -> dict[str, int]:
    deck: dict[str, int] = {}
    per_color = {"draw2": 3, "draw4": 2, "skip": 3, "skipall": 2, "reverse": 3, "discard": 3}
    for c in COLOR_LETTERS:
        for n in range(10):
            deck[f"{c}-{n}"] = 2
        for kind, count in per_color.items():
            deck[f"{c}-{kind}"] = count
    deck.update({"w-reverse4": 8, "w-draw6": 4, "w-draw10": 4, "w-roulette": 8})
    return deck


#: The printed 168-card deck (rules.md table), as code -> count.
STANDARD_DECK: dict[str, int] = _standard_deck()


def most_held_color(hand: Iterable[str]) -> str:
    """The wire name of the colour ``hand`` holds most cards of, wilds counting for none, ties
    in the order red, yellow, green, blue: the default colour of rules.md "Choices"."""
    counts = dict.fromkeys(COLOR_LETTERS, 0)
    for card in hand:
        letter = CARD_INFO[card].color
        if letter != WILD:
            counts[letter] += 1
    # max() keeps the first of equal counts: the tie order is COLOR_LETTERS'
    return LETTER_TO_NAME[max(COLOR_LETTERS, key=counts.__getitem__)]


def build_deck(composition: dict[str, int] | tuple[tuple[str, int], ...]) -> list[str]:
    """All cards of a deck composition, in a fixed order (shuffle it before use)."""
    items = composition.items() if isinstance(composition, dict) else composition
    deck: list[str] = []
    for code, count in items:
        deck.extend([code] * count)
    return deck


def can_play_on(card: CardInfo, top: CardInfo, color: str) -> bool:
    """rules.md "A turn": a card matches the current colour, number or symbol, or is a wild."""
    return card.wild or card.color == color or (card.symbol is not None and card.symbol == top.symbol)


#: ``PLAYABLE[colour letter][top code]``: every code :func:`can_play_on` accepts there. The hot
#: paths (legal moves for every view, bots, simulations) test membership instead; two plain
#: lookups, as a tuple key would be built and hashed on every test.
PLAYABLE: dict[str, dict[str, frozenset[str]]] = {
    color: {top: frozenset(c for c, info in CARD_INFO.items() if can_play_on(info, CARD_INFO[top], color))
            for top in CARD_INFO}
    for color in COLOR_LETTERS
}
