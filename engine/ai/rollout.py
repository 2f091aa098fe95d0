"""Fast policies that play directly on a sampled state, for the ``hard`` bot's simulations.

:func:`guided_action` plays every seat the way the ``normal`` heuristic would (the same scores,
read off the state instead of a view): the search then answers "what works best against the
table as it really plays", which is what the ``hard`` bot is measured on. :func:`rollout_action`
is the older, cheaper policy (a random calm card), kept for comparison in the tournament.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..actions import DRAW, PASS, Action
from ..autoplay import complete_play, default_choice
from ..cards import CARD_INFO, Kind
from ..game import apply
from ..legal import playable_cards
from ..refusals import draw_refusal, pass_refusal
from ..rules import Seven, Zero
from ..state import GameState
from .heuristic import HIGH_DRAW

Policy = Callable[[GameState, int, random.Random], Action]



def _no_play(s: GameState, seat: int) -> Action:
    if draw_refusal(s, seat) is None:
        return DRAW
    if pass_refusal(s, seat) is None:
        return PASS
    return DRAW  # pragma: no cover - a legal move always exists


def rollout_action(s: GameState, seat: int, rng: random.Random) -> Action:
    """A knock-out when one is on offer, else a random card that keeps the big draw cards."""
    if s.pending is not None:
        return default_choice(s)
    cards = playable_cards(s, seat)
    if s.stack_last:
        if cards:
            return complete_play(s, seat, min(cards, key=lambda c: CARD_INFO[c].draw))
        return DRAW
    if cards:
        victim = len(s.hands[s.next_active(seat)])
        limit = s.rules.mercy_limit
        for c in cards:
            if CARD_INFO[c].draw and victim + CARD_INFO[c].draw >= limit:
                return complete_play(s, seat, c)
        calm = [c for c in cards if CARD_INFO[c].draw < 4] or cards
        return complete_play(s, seat, calm[rng.randrange(len(calm))])
    return _no_play(s, seat)


def guided_action(s: GameState, seat: int, rng: random.Random) -> Action:
    """The ``normal`` bot's move, computed from the state.

    -- speed: the loop below is :func:`engine.ai.heuristic.card_score` inlined (change them
    together): it runs for every card of every simulated turn of the hard bot's search.
    """
    if s.pending is not None:
        return default_choice(s)
    cards = playable_cards(s, seat)
    if s.stack_last:
        if cards:
            return complete_play(s, seat, min(cards, key=lambda c: (CARD_INFO[c].draw,
                                                                    CARD_INFO[c].wild)))
        return DRAW
    if not cards:
        return _no_play(s, seat)
    if len(cards) == 1:
        return complete_play(s, seat, cards[0])
    hands = s.hands
    hand = hands[seat]
    colors: dict[str, int] = {}
    for c in hand:
        k = CARD_INFO[c].color
        colors[k] = colors.get(k, 0) + 1
    nxt = len(hands[s.next_active(seat)])
    others = [len(hands[i]) for i in s.active_seats() if i != seat]
    danger = min(others, default=99)
    limit = s.rules.mercy_limit
    mine = len(hand)
    rules = s.rules
    best = cards[0]
    best_score = -1e9
    for card in cards:
        info = CARD_INFO[card]
        same = colors.get(info.color, 0)
        score = same * 0.5
        if danger <= 2:
            score += info.points / 10
        if info.draw:
            if nxt + info.draw >= limit:
                score += 12
            elif nxt <= 2:
                score += 8
            elif info.kind in HIGH_DRAW:
                score -= 6
            else:
                score += 1
        kind = info.kind
        if kind is Kind.SKIP_ALL:
            score += 3 + (2 if mine > 3 else 0)
        elif kind is Kind.SKIP or kind is Kind.REVERSE:
            score += 2 + (3 if nxt <= 2 else 0)
        elif kind is Kind.DISCARD_ALL:
            score += 2 * (same - 1)
        elif kind is Kind.ROULETTE:
            score += 4 if nxt <= 3 or nxt + 6 >= limit else -2
        elif kind is Kind.NUMBER and info.number == 7 and rules.seven is not Seven.OFF:
            score += (mine - 1 - danger) * 1.5
        elif kind is Kind.NUMBER and info.number == 0 and rules.zero is Zero.PASS:
            incoming = len(hands[s.next_active(seat, -s.direction)])
            score += (mine - 1 - incoming) * 1.0
        elif info.wild:
            score -= 4
        else:
            score += info.points / 20
        score += rng.random() * 1e-3  # ties broken at random, as the heuristic does
        if score > best_score:
            best, best_score = card, score
    return complete_play(s, seat, best)


POLICIES: dict[str, Policy] = {"guided": guided_action, "random": rollout_action}


def play_out(s: GameState, rng: random.Random, max_actions: int,
             policy: Policy = rollout_action) -> GameState:
    """Play ``s`` forward in place with ``policy`` for every seat."""
    for _ in range(max_actions):
        if s.winner is not None:
            break
        seat = s.pending.player if s.pending is not None else s.turn
        apply(s, s.players[seat], policy(s, seat, rng), 0, in_place=True)
    return s
