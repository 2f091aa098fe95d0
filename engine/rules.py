"""The rules object of a room (rules.md, "The rules object").

:class:`Rules` is a frozen value; :func:`make_rules` builds one from a partial mapping the way the
lobby does: ``preset`` first (it sets every option), then single options over it. Anything
unknown or out of range raises :class:`~engine.errors.RulesError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any

from .cards import COLOR_LETTERS, STANDARD_DECK, card_info
from .errors import RulesError


class DrawRule(StrEnum):
    VOLUNTARY = "voluntary"
    UNTIL_PLAYABLE = "until_playable"
    ONE = "one"


class Stacking(StrEnum):
    LADDER = "ladder"
    WILD_ANY = "wild_any"
    ANY = "any"
    OFF = "off"


class FirstCard(StrEnum):
    REDRAW = "redraw"
    APPLY = "apply"


class Reverse4TwoPlayers(StrEnum):
    SELF = "self"
    OPPONENT = "opponent"


class DiscardAllTop(StrEnum):
    DISCARD_ALL = "discard_all"
    CHOOSE = "choose"


class Seven(StrEnum):
    SWAP = "swap"
    MAY_SWAP = "may_swap"
    OFF = "off"


class Zero(StrEnum):
    PASS = "pass"
    OFF = "off"


class RouletteChooser(StrEnum):
    TARGET = "target"
    PLAYER = "player"


MAX_DECK_TOTAL = 400


class _WireFormSlot:
    """Room on a :class:`Rules` value for its wire form, which is no option: a slotted
    dataclass's own slots are its fields."""

    __slots__ = ("_wire",)


@dataclass(frozen=True, slots=True)
class Rules(_WireFormSlot):
    """Every option of rules.md. Defaults are the ``mercyless`` preset.

    A value: equal options make equal, hashable rules. Its wire form is built once, when the
    value is made, and kept on it: the server writes it with every commit.
    """

    draw: DrawRule = DrawRule.VOLUNTARY
    stacking: Stacking = Stacking.LADDER
    first_card: FirstCard = FirstCard.REDRAW
    reverse4_two_players: Reverse4TwoPlayers = Reverse4TwoPlayers.SELF
    discard_all_top: DiscardAllTop = DiscardAllTop.DISCARD_ALL
    seven: Seven = Seven.SWAP
    zero: Zero = Zero.PASS
    roulette_chooser: RouletteChooser = RouletteChooser.TARGET
    mercy_limit: int = 25
    hand_size: int = 7
    uno_penalty: int = 2
    catch_window_s: int = 5
    scoring: bool = True
    target_score: int = 1000
    turn_timer_s: int = 60
    deck: tuple[tuple[str, int], ...] = tuple(STANDARD_DECK.items())

    def __post_init__(self) -> None:
        wire = {f.name: getattr(self, f.name) for f in fields(self)}
        wire["deck"] = dict(self.deck)
        for key, value in wire.items():
            if isinstance(value, StrEnum):
                wire[key] = value.value
        object.__setattr__(self, "_wire", wire)  # frozen: the dataclass refuses plain assignment

    def __reduce__(self) -> tuple[type[Rules], tuple[Any, ...]]:
        # copies and pickles are built through __init__, which makes their wire form (the
        # dataclass's own state functions carry the fields alone)
        return type(self), tuple(getattr(self, f.name) for f in fields(self))

    @property
    def deck_size(self) -> int:
        return sum(n for _, n in self.deck)

    def to_dict(self) -> dict[str, Any]:
        """The wire form (protocol.md ``room.rules``): enums as strings, the deck as a mapping.
        A fresh dict each call: callers may change it."""
        wire = self._wire
        return {**wire, "deck": dict(wire["deck"])}

    def shared_wire_form(self) -> dict[str, Any]:
        """:meth:`to_dict`'s mapping, one object per rules value, never to be changed: for a
        state's ``to_dict``, which the server writes with every commit."""
        return self._wire

    def can_deal(self, players: int) -> bool:
        """Enough cards for every hand plus the first discard."""
        return self.hand_size * players + 1 <= self.deck_size


PRESETS: dict[str, Rules] = {
    "mercyless": Rules(),
    "printed": Rules(draw=DrawRule.UNTIL_PLAYABLE),
}

_ENUMS: dict[str, type[StrEnum]] = {
    "draw": DrawRule,
    "stacking": Stacking,
    "first_card": FirstCard,
    "reverse4_two_players": Reverse4TwoPlayers,
    "discard_all_top": DiscardAllTop,
    "seven": Seven,
    "zero": Zero,
    "roulette_chooser": RouletteChooser,
}
_RANGES: dict[str, tuple[int, int]] = {
    "mercy_limit": (10, 60),
    "hand_size": (1, 15),
    "uno_penalty": (0, 10),
    "catch_window_s": (1, 30),
    "target_score": (100, 5000),
    "turn_timer_s": (10, 600),  # or 0 = off
}
OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules))


def _check_int(field: str, value: Any) -> int:
    low, high = _RANGES[field]
    extra = " (or 0 for off)" if field == "turn_timer_s" else ""
    if isinstance(value, float) and value.is_integer() and abs(value) > 2**63:
        # a whole number past 64 bits reaches us as a float: what is wrong with it is its size
        raise RulesError(field, f"must be between {low} and {high}{extra}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesError(field, "must be an integer")
    if field == "turn_timer_s" and value == 0:
        return 0
    if not low <= value <= high:
        raise RulesError(field, f"must be between {low} and {high}{extra}")
    return value


def _check_deck(value: Any) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, Mapping) or not value:
        raise RulesError("deck", "must be a mapping of card code to count")
    deck: list[tuple[str, int]] = []
    colors: set[str] = set()
    for code, count in value.items():
        info = card_info(code)
        if info is None:
            raise RulesError("deck", f"unknown card code {str(code)[:20]!r}")
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_DECK_TOTAL:
            raise RulesError("deck", f"count of {code} must be an integer from 0 to {MAX_DECK_TOTAL}")
        if count:
            deck.append((code, count))
            colors.add(info.color)
    missing = [c for c in COLOR_LETTERS if c not in colors]
    if missing:
        raise RulesError("deck", "needs at least one card of each colour")
    if sum(n for _, n in deck) > MAX_DECK_TOTAL:
        raise RulesError("deck", f"may hold at most {MAX_DECK_TOTAL} cards")
    return tuple(deck)


def verify_option(field: str, value: Any) -> Any:
    """The checked, typed value of one option; raises :class:`RulesError` naming ``field``."""
    if field in _ENUMS:
        enum = _ENUMS[field]
        try:
            return enum(value)
        except (ValueError, TypeError):
            allowed = ", ".join(m.value for m in enum)
            raise RulesError(field, f"must be one of {allowed}") from None
    if field in _RANGES:
        return _check_int(field, value)
    if field == "scoring":
        if not isinstance(value, bool):
            raise RulesError(field, "must be true or false")
        return value
    if field == "deck":
        return _check_deck(value)
    raise RulesError(str(field)[:40], "unknown option")


def make_rules(options: Mapping[str, Any] | None = None, base: Rules | None = None) -> Rules:
    """Rules from a partial mapping: ``preset`` (if any) first, then each option over it.

    >>> make_rules({"preset": "printed", "seven": "off"}).draw.value
    'until_playable'
    """
    options = dict(options or {})
    rules = base or PRESETS["mercyless"]
    if "preset" in options:
        preset = options.pop("preset")
        if not isinstance(preset, str) or preset not in PRESETS:
            raise RulesError("preset", f"must be one of {', '.join(PRESETS)}")
        rules = PRESETS[preset]
    changes = {str(field): verify_option(str(field), value) for field, value in options.items()}
    rules = replace(rules, **changes)
    if rules.hand_size >= rules.mercy_limit:
        raise RulesError("hand_size", "must be below mercy_limit")
    return rules


_FROM_WIRE: dict[Any, Rules] = {}
_STANDARD_MARK = ("standard deck",)


def rules_from_wire(options: Mapping[str, Any]) -> Rules:
    """:func:`make_rules` for a complete stored mapping (``Rules.to_dict``), remembered: rules are
    immutable values, and a server loads a room's state (with its rules) on many commits."""
    # the deck (the one mapping) is keyed by its items, or by a mark when it is the standard one
    # (the common case, found with one comparison): the key costs ~2 us instead of ~8
    deck = options.get("deck")
    keyed = options
    if isinstance(deck, dict):
        keyed = {**options, "deck": _STANDARD_MARK if deck == STANDARD_DECK else tuple(deck.items())}
    try:
        key = (tuple(keyed), tuple(keyed.values()))
        rules = _FROM_WIRE.get(key)
    except TypeError:  # an unhashable value: validate it the long way (and raise on it)
        return make_rules(options)
    if rules is None:
        rules = make_rules(options)
        if len(_FROM_WIRE) >= 256:
            _FROM_WIRE.clear()
        _FROM_WIRE[key] = rules
    return rules


def rules_catalog() -> dict[str, Any]:
    """What ``GET /api/rules`` lists: the presets and every option with its values and default."""
    options: dict[str, Any] = {}
    default = PRESETS["mercyless"].to_dict()
    for name in OPTION_NAMES:
        entry: dict[str, Any] = {"default": default[name]}
        if name in _ENUMS:
            entry["values"] = [m.value for m in _ENUMS[name]]
        elif name in _RANGES:
            entry["min"], entry["max"] = _RANGES[name]
            if name == "turn_timer_s":
                entry["off"] = 0
        elif name == "scoring":
            entry["values"] = [True, False]
        else:
            entry["codes"] = [*sorted(STANDARD_DECK), "w-wild"]
            entry["max_total"] = MAX_DECK_TOTAL
        options[name] = entry
    return {"presets": {k: v.to_dict() for k, v in PRESETS.items()}, "options": options}
