"""The whole state of one round, as plain data.

:class:`GameState` is a dataclass of lists, ints and strings so that it serialises to JSON and
back exactly (:meth:`to_dict` / :meth:`from_dict`, schema :data:`SCHEMA_VERSION`). Callers treat
it as a value: :func:`engine.apply` never changes the state it is given, it changes a
:meth:`clone` and returns that. (A fully frozen tree rebuilt on every move costs several times
more than copying a handful of short lists, and the engine's speed matters to bots and tests.)

Seats are indexes into ``players`` (the player ids, in seat order); piles keep their top card at
the end of the list.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from types import MethodType
from typing import Any, NamedTuple

from ._records import record_maker
from .cards import PLAYABLE
from .rules import Rules, rules_from_wire

SCHEMA_VERSION = 1


class Choice(StrEnum):
    """What a pending choice waits for (protocol.md ``game.pending.choice``)."""

    COLOR = "color"
    TARGET = "target"
    TOP = "top"
    ROULETTE_COLOR = "roulette_color"


class Pending(NamedTuple):
    """A play paused for one player's choice.

    For ``color``/``target``/``top`` the card is still in the chooser's hand and ``uno`` is what
    the play said; for ``roulette_color`` the roulette is on the pile, ``player`` is its target
    and ``by`` who played it.
    """

    player: int
    choice: Choice
    card: str
    uno: bool = False
    by: int = -1


#: ``new_pending((player, choice, card, uno, by))``: a :class:`Pending` from all five fields, at C
#: speed (see :func:`~engine._records.record_maker`).
new_pending = record_maker(Pending)


@dataclass(eq=True, slots=True)
class GameState:
    rules: Rules
    players: tuple[str, ...]
    seed: str
    rng_counter: int
    hands: list[list[str]]
    eliminated: list[bool]
    uno: list[bool]  # called UNO and still holds exactly one card
    scores: list[int]  # match scores; updated when the round ends
    draw_pile: list[str]
    discard: list[str]
    set_aside: list[str]  # hands of eliminated players, until the draw pile is rebuilt
    color: str  # current colour letter
    direction: int  # 1 = seat order (clockwise), -1 = reversed
    turn: int
    dealer: int
    stack_total: int = 0
    stack_last: int = 0  # draw value of the last draw card on the stack; 0 = no stack
    pending: Pending | None = None
    drew: bool = False  # the turn player drew this turn (draw rule `one`)
    drawn: str | None = None  # the card the turn player must (`until_playable`) or may (`one`) play
    passes: int = 0  # passes in a row; when every active player passed, the round ends
    exposed: list[tuple[int, int]] = field(default_factory=list)  # (seat, until_ms)
    turn_deadline: int | None = None
    winner: int | None = None
    points: int = 0  # what the winner scored this round
    end_reason: str | None = None  # "out", "last_standing" or "deadlock"
    moves: int = 0  # actions applied since the deal
    reshuffled_at: list[str] = field(default_factory=list)  # position keys at each pile rebuild

    # -- queries -----------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        return self.winner is not None

    @property
    def deck_size(self) -> int:
        return self.rules.deck_size

    def seat_of(self, player: str) -> int | None:
        try:
            return self.players.index(player)
        except ValueError:
            return None

    def active_count(self) -> int:
        return self.eliminated.count(False)

    def active_seats(self) -> list[int]:
        return [i for i, out in enumerate(self.eliminated) if not out]

    def next_active(self, seat: int, direction: int | None = None) -> int:
        """The next seat after ``seat`` in ``direction`` that is not eliminated."""
        step = self.direction if direction is None else direction
        n = len(self.players)
        out = self.eliminated
        nxt = (seat + step) % n
        while out[nxt] and nxt != seat:
            nxt = (nxt + step) % n
        return nxt

    def card_count(self) -> int:
        """Cards in every hand and pile: the deck size at every step (conservation)."""
        return (sum(len(h) for h in self.hands) + len(self.draw_pile) + len(self.discard)
                + len(self.set_aside))

    def can_refill(self) -> bool:
        """A card could still be drawn: the pile, or material to rebuild it, is there."""
        if self.draw_pile:  # nearly always: answered without a call to bool()
            return True
        return len(self.discard) > 1 or bool(self.set_aside)

    def matching_cards(self) -> frozenset[str]:
        """Every card code that matches the discard pile now: the current colour, the top
        card's number or symbol, or a wild (rules.md "A turn"). Stacks and drawn cards aside:
        :func:`~engine.plays.can_play` says whether the turn player may put a card down."""
        return PLAYABLE[self.color][self.discard[-1]]

    # -- copying and serialisation -----------------------------------------------------------

    def clone(self) -> GameState:
        """A copy that may be changed without changing this state.

        Copy-on-write keeps this cheap: the engine never changes a list of a state in place
        (a hand, a pile, ``uno``, ``scores``...) but builds a new list and assigns it, so a clone
        shares every list but the outer list of hands, which swaps and passes assign into.

        The state has slots and the copy is written out field by field: a copy through
        ``__dict__`` leaves an instance whose attributes CPython reads about five times slower
        (a materialised dict instead of inline values), which cost more than the copy itself.
        A test holds this list to the dataclass's fields.
        """
        new = _blank_state()
        new.rules = self.rules
        new.players = self.players
        new.seed = self.seed
        new.rng_counter = self.rng_counter
        new.hands = self.hands[:]
        new.eliminated = self.eliminated
        new.uno = self.uno
        new.scores = self.scores
        new.draw_pile = self.draw_pile
        new.discard = self.discard
        new.set_aside = self.set_aside
        new.color = self.color
        new.direction = self.direction
        new.turn = self.turn
        new.dealer = self.dealer
        new.stack_total = self.stack_total
        new.stack_last = self.stack_last
        new.pending = self.pending
        new.drew = self.drew
        new.drawn = self.drawn
        new.passes = self.passes
        new.exposed = self.exposed
        new.turn_deadline = self.turn_deadline
        new.winner = self.winner
        new.points = self.points
        new.end_reason = self.end_reason
        new.moves = self.moves
        new.reshuffled_at = self.reshuffled_at
        return new

    def to_dict(self) -> dict[str, Any]:
        d = {name: getattr(self, name) for name in _FIELD_NAMES}
        d["schema"] = SCHEMA_VERSION
        d["rules"] = self.rules.shared_wire_form()
        d["players"] = list(self.players)
        d["exposed"] = [list(e) for e in self.exposed]
        p = self.pending
        d["pending"] = None if p is None else {
            "player": p.player, "choice": p.choice.value, "card": p.card, "uno": p.uno, "by": p.by}
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameState:
        d = dict(data)
        schema = d.pop("schema", None)
        if schema != SCHEMA_VERSION:
            raise ValueError(f"unsupported game state schema {schema!r}")
        d["rules"] = rules_from_wire(d["rules"])
        d["players"] = tuple(d["players"])
        d["exposed"] = [(int(s), int(t)) for s, t in d["exposed"]]
        p = d["pending"]
        d["pending"] = None if p is None else Pending(
            p["player"], Choice(p["choice"]), p["card"], p["uno"], p["by"])
        return cls(**d)


_FIELD_NAMES = tuple(f.name for f in fields(GameState))
#: A GameState with no field set, for :meth:`GameState.clone` alone (which sets every one): it
#: skips the dataclass's Python-level ``__init__``, and is bound to the class so that it builds
#: nothing else.
_blank_state = MethodType(object.__new__, GameState)
