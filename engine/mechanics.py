"""Shared steps of the rules: drawing with reshuffle and mercy, elimination, turn hand-over and
the end of a round. Every function here changes the (cloned) state it is given and appends to
``events``; the handlers of :mod:`engine.handlers` and :mod:`engine.plays` decide when to call
them.
"""

from __future__ import annotations

import hashlib

from ._members import EV_ELIMINATED, EV_MATCH_OVER, EV_RESHUFFLED, EV_ROUND_OVER
from .cards import CARD_INFO
from .events import Event, new_event
from .rng import Rng
from .state import GameState

ELIMINATION_BONUS = 250


def begin_turn(s: GameState, seat: int, now_ms: int) -> None:
    """``seat`` starts a turn: per-turn draw state clears and the turn timer restarts."""
    s.turn = seat
    s.drew = False
    s.drawn = None
    timer = s.rules.turn_timer_s
    s.turn_deadline = now_ms + timer * 1000 if timer else None


def hand_changed(s: GameState, seat: int) -> None:
    """rules.md "UNO and Catch": the UNO flag resets and a catch window closes whenever the
    hand size changes."""
    if s.uno[seat]:
        uno = s.uno[:]
        uno[seat] = False
        s.uno = uno
    if s.exposed:
        s.exposed = [e for e in s.exposed if e[0] != seat]


def reshuffle(s: GameState, events: list[Event]) -> bool:
    """rules.md "Running out": all but the top discard plus the set-aside hands, shuffled, become
    the draw pile. False when there is nothing to rebuild it from."""
    material = s.discard[:-1] + s.set_aside
    if not material:
        return False
    key = position_key(s)
    if key in s.reshuffled_at:
        # the round came back to a position it already rebuilt the pile from: it cannot make
        # progress (tiny decks can cycle forever), so it ends as a deadlock
        end_round(s, events, fewest_cards(s, s.turn), "deadlock")
        return False
    s.reshuffled_at = [*s.reshuffled_at, key]
    s.discard = s.discard[-1:]
    s.set_aside = []
    rng = Rng(s.seed, s.rng_counter)
    rng.shuffle(material)
    s.rng_counter = rng.counter
    s.draw_pile = material + s.draw_pile
    events.append(new_event((EV_RESHUFFLED, {"count": len(material)}, None, None)))
    return True


def position_key(s: GameState) -> str:
    """Everything that decides how the round goes on, but the generator's counter."""
    pending = s.pending and (s.pending.player, s.pending.choice.value, s.pending.card)
    parts = [s.turn, s.direction, s.color, s.stack_total, s.stack_last, s.eliminated,
             [sorted(h) for h in s.hands], sorted(s.discard[:-1]), s.discard[-1], sorted(s.set_aside),
             s.draw_pile, pending]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def fewest_cards(s: GameState, start: int) -> int:
    """The active player with the fewest cards; ties go to the first in turn order from
    ``start`` (itself first)."""
    order = [start] if not s.eliminated[start] else []
    nxt = s.next_active(start)
    while nxt != start and nxt not in order:
        order.append(nxt)
        nxt = s.next_active(nxt)
    return min(order, key=lambda i: len(s.hands[i]))


def draw_cards(s: GameState, events: list[Event], seat: int, count: int,
               until_color: str | None = None, until_playable: bool = False) -> tuple[list[str], bool]:
    """Move up to ``count`` cards from the draw pile into ``seat``'s hand.

    Stops early when the hand reaches the mercy limit (returns ``busted=True``; the caller
    eliminates after announcing the draw), when no card is left anywhere, or, with
    ``until_color``, after the first non-wild card of that colour (roulette), or, with
    ``until_playable``, after the first playable card. A rebuild of the pile mid-draw lets the
    draw go on.
    """
    hand = s.hands[seat] = s.hands[seat][:]
    limit = s.rules.mercy_limit
    pile = s.draw_pile = s.draw_pile[:]
    # a rebuild of the pile keeps the top card, so what is playable stays the same all along
    playable = s.matching_cards() if until_playable else None
    drawn: list[str] = []
    busted = False
    while len(drawn) < count:
        if not pile:
            if not reshuffle(s, events):
                break
            pile = s.draw_pile
        card = pile.pop()
        hand.append(card)
        drawn.append(card)
        if len(hand) >= limit:
            busted = True
            break
        if until_color is not None:
            if CARD_INFO[card].color == until_color:
                break
        elif playable is not None and card in playable:
            break
    if drawn and (s.uno[seat] or s.exposed):
        hand_changed(s, seat)
    return drawn, busted


def eliminate(s: GameState, events: list[Event], seat: int, now_ms: int) -> None:
    """rules.md "Mercy": the hand is set aside, the seat is out; a choice or stack waiting on it
    drops; with one active player left, the round ends."""
    eliminated = s.eliminated[:]
    eliminated[seat] = True
    s.eliminated = eliminated
    s.set_aside = s.set_aside + s.hands[seat]
    s.hands[seat] = []
    hand_changed(s, seat)
    events.append(new_event((EV_ELIMINATED, {"player": s.players[seat]}, None, None)))
    active = s.active_seats()
    if len(active) == 1:
        end_round(s, events, active[0], "last_standing")
        return
    if s.pending is not None and s.pending.player == seat:
        s.pending = None
    if s.turn == seat:
        s.stack_total = s.stack_last = 0
        s.pending = None
        begin_turn(s, s.next_active(seat), now_ms)


def end_round(s: GameState, events: list[Event], winner: int, reason: str) -> None:
    """rules.md "Ending and scoring": the winner scores the cards still held by the other active
    players plus 250 per player eliminated this round."""
    s.winner = winner
    s.end_reason = reason
    s.pending = None
    s.stack_total = s.stack_last = 0
    s.exposed = []
    s.turn_deadline = None
    s.drew = False
    s.drawn = None
    points = 0
    if s.rules.scoring:
        for seat, hand in enumerate(s.hands):
            if seat != winner and not s.eliminated[seat]:
                points += sum(CARD_INFO[c].points for c in hand)
        points += ELIMINATION_BONUS * sum(s.eliminated)
        scores = s.scores[:]
        scores[winner] += points
        s.scores = scores
    s.points = points
    events.append(new_event((EV_ROUND_OVER, {
        "winner": s.players[winner], "points": points,
        "scores": dict(zip(s.players, s.scores, strict=True)), "reason": reason,
        "deal_seed": s.seed}, None, None)))
    if s.rules.scoring and s.scores[winner] >= s.rules.target_score:
        events.append(new_event((EV_MATCH_OVER, {"winner": s.players[winner]}, None, None)))


def match_won(s: GameState) -> bool:
    """The round ended and its winner reached the target score."""
    return (s.winner is not None and s.rules.scoring
            and s.scores[s.winner] >= s.rules.target_score)
