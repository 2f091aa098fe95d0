"""Creating a round and applying actions to it: the engine's public verbs.

``apply(state, player, action, now_ms)`` returns a :class:`Transition` (new state, events) or
raises :class:`~engine.errors.IllegalAction`; the given state is never changed, so a refused
action leaves it exactly as it was. Time enters only as ``now_ms``. What each kind of action
does is in :mod:`engine.handlers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ._members import (
    A_EXPIRE,
    A_TIMEOUT,
    EV_MATCH_OVER,
    EV_REVERSED,
    EV_ROUND_OVER,
    EV_SKIPPED,
    EV_STARTED,
    FIRST_APPLY,
    K_DRAW2,
    K_DRAW4,
    K_NUMBER,
    K_REVERSE,
    K_SKIP,
    K_SKIP_ALL,
)
from ._records import record_maker
from .actions import SYSTEM_KINDS, Action, ActionKind
from .cards import CARD_INFO, COLOR_LETTERS, LETTER_TO_NAME, build_deck
from .errors import ErrorCode, IllegalAction
from .events import Event, new_event
from .fairdeal import deal_commitment
from .handlers import HANDLERS
from .mechanics import begin_turn, end_round, fewest_cards
from .plays import penalty_draw
from .rng import Rng
from .rules import Rules
from .state import GameState

MAX_SEATS = 20


class Transition(NamedTuple):
    """What :func:`new_game` and :func:`apply` return: the state after the step and the
    step's events, in the order they happened."""

    state: GameState
    events: tuple[Event, ...]


#: ``new_transition((state, events))``: a :class:`Transition` at C speed (see
#: :func:`~engine._records.record_maker`): one per applied action.
new_transition = record_maker(Transition)


# -- a new round ------------------------------------------------------------------------------

def new_game(players: Sequence[str], rules: Rules, seed: str, *, dealer: int | None = None,
             scores: Sequence[int] | None = None, now_ms: int = 0) -> Transition:
    """Shuffle, deal ``hand_size`` each, flip the first card (rules.md "Setup").

    ``dealer`` defaults to the last seat, so seat 0 plays first; ``scores`` carry the match.
    """
    players = tuple(players)
    n = len(players)
    if not 2 <= n <= MAX_SEATS or len(set(players)) != n:
        raise ValueError(f"a round needs 2 to {MAX_SEATS} distinct players")
    if not rules.can_deal(n):
        raise IllegalAction(ErrorCode.BAD_RULES, "deck: too few cards to deal every hand")
    dealer = n - 1 if dealer is None else dealer % n
    rng = Rng(seed, 0)
    pile = build_deck(rules.deck)
    rng.shuffle(pile)
    hands: list[list[str]] = [[] for _ in players]
    for _ in range(rules.hand_size):
        for k in range(1, n + 1):
            hands[(dealer + k) % n].append(pile.pop())
    s = GameState(
        rules=rules, players=players, seed=seed, rng_counter=rng.counter, hands=hands,
        eliminated=[False] * n, uno=[False] * n,
        scores=list(scores) if scores is not None else [0] * n,
        draw_pile=pile, discard=[], set_aside=[], color="r", direction=1,
        turn=(dealer + 1) % n, dealer=dealer)
    events: list[Event] = []
    _flip_first_card(s, events, rng, now_ms)
    events.insert(0, new_event((EV_STARTED, {
        "dealer": players[dealer], "top": s.discard[-1], "color": LETTER_TO_NAME[s.color],
        "deal_commitment": deal_commitment(seed)}, None, None)))
    return new_transition((s, tuple(events)))


def _flip_first_card(s: GameState, events: list[Event], rng: Rng, now_ms: int) -> None:
    """rules.md "Setup", option ``first_card``."""
    pile = s.draw_pile
    first = (s.dealer + 1) % len(s.players)
    apply_mode = s.rules.first_card is FIRST_APPLY
    while True:
        if not pile:  # a custom deck with no suitable card left: play on what is on top
            break
        card = pile.pop()
        info = CARD_INFO[card]
        if apply_mode and info.wild:
            if all(CARD_INFO[c].wild for c in pile):
                # only wilds left (a custom deck): putting it back would flip wilds for ever;
                # it stays on top, as the redraw fallback's does (docs/engine.md)
                s.discard.append(card)
                break
            pile.insert(rng.below(len(pile) + 1), card)
            s.rng_counter = rng.counter
            continue
        s.discard.append(card)
        if info.kind is K_NUMBER or (apply_mode and not info.wild):
            break
    top = CARD_INFO[s.discard[-1]]
    s.color = top.color if not top.wild else COLOR_LETTERS[0]
    begin_turn(s, first, now_ms)
    if not apply_mode or top.wild:
        return
    kind = top.kind
    if kind is K_SKIP:
        events.append(new_event((EV_SKIPPED, {"players": [s.players[first]]}, None, None)))
        begin_turn(s, s.next_active(first), now_ms)
    elif kind is K_REVERSE:
        s.direction = -1
        events.append(new_event((EV_REVERSED, {"direction": -1}, None, None)))
        begin_turn(s, s.dealer, now_ms)
    elif kind is K_SKIP_ALL:
        begin_turn(s, s.dealer, now_ms)
    elif kind in (K_DRAW2, K_DRAW4):
        penalty_draw(s, events, first, top.draw, now_ms)
        if s.winner is None:
            events.append(new_event((EV_SKIPPED, {"players": [s.players[first]]}, None, None)))
            begin_turn(s, s.next_active(first), now_ms)


# -- applying actions -------------------------------------------------------------------------

#: Actions after which a round that has not ended ends as a deadlock. Random play over every
#: preset takes at most ~530 with ten seats (median 305); a custom deck heavy in draw cards,
#: stacking ``any`` and a mercy limit above the deck's size went on for 10,000+ actions of
#: players who play to win, without repeating a position (docs/engine.md).
MAX_ROUND_MOVES = 5000


def apply(state: GameState, player: str | None, action: Action, now_ms: int, *,
          in_place: bool = False) -> Transition:
    """Apply ``action`` by ``player`` (``None`` for the server's own timed steps) at ``now_ms``.

    The given state is left as it was and a changed copy is returned; with ``in_place=True``
    (for simulations and bots that keep their own copies) the given state itself is changed and
    returned. Either way a refused action changes nothing: every handler verifies before it
    changes anything.
    """
    if state.winner is not None:
        raise IllegalAction(ErrorCode.GAME_OVER, "the round is over")
    kind = action.kind
    handler = HANDLERS.get(kind)
    if handler is None:
        raise IllegalAction(ErrorCode.BAD_MESSAGE, "not a game action")
    if player is None:
        if kind not in SYSTEM_KINDS:
            raise IllegalAction(ErrorCode.NOT_A_PLAYER, "only players act")
        seat = -1
    else:
        if kind in SYSTEM_KINDS:
            raise IllegalAction(ErrorCode.BAD_MESSAGE, "players cannot send that")
        try:
            seat = state.players.index(player)
        except ValueError:
            raise IllegalAction(ErrorCode.NOT_A_PLAYER, "you are not playing this round") from None
        if state.eliminated[seat]:
            raise IllegalAction(ErrorCode.ELIMINATED, "you are out of this round")
    s = state if in_place else state.clone()
    events: list[Event] = []
    handler(s, events, seat, action, now_ms)
    s.moves += 1
    if s.winner is None and s.moves >= MAX_ROUND_MOVES:
        # rules.md "A game must never lock": a round still going after this many actions
        # ends as a deadlock (fewest cards wins, ties from the player to move)
        end_round(s, events, fewest_cards(s, s.turn), "deadlock")
    if s.winner is not None:
        _settle_end(s, events)
    return new_transition((s, tuple(events)))


def _settle_end(s: GameState, events: list[Event]) -> None:
    """A round can end in the middle of a step (a pile rebuild that finds the round going in
    circles): nothing is due afterwards, and ``round_over`` / ``match_over`` come last."""
    s.turn_deadline = None
    s.drew, s.drawn = False, None
    last = [e for e in events if e.kind is EV_ROUND_OVER or e.kind is EV_MATCH_OVER]
    if last and events[-len(last):] != last:
        events[:] = [e for e in events if e not in last] + last


def next_deadline(s: GameState) -> tuple[ActionKind, int] | None:
    """The next timed step the server must apply, and when: a catch window's end or the turn's."""
    if s.winner is not None:
        return None
    best: tuple[ActionKind, int] | None = None
    if s.exposed:
        best = (A_EXPIRE, min(t for _, t in s.exposed))
    if s.turn_deadline is not None and (best is None or s.turn_deadline < best[1]):
        best = (A_TIMEOUT, s.turn_deadline)
    return best
