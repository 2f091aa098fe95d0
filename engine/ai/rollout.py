"""A fast policy that plays directly on a sampled state, for the ``hard`` bot's simulations."""

from __future__ import annotations

import random

from ..actions import DRAW, PASS, Action
from ..autoplay import complete_play, default_choice
from ..cards import CARD_INFO
from ..game import apply
from ..legal import playable_cards
from ..refusals import draw_refusal, pass_refusal
from ..state import GameState


def rollout_action(s: GameState, seat: int, rng: random.Random) -> Action:
    if s.pending is not None:
        return default_choice(s)
    cards = playable_cards(s, seat)
    if s.stack_last:
        if cards:
            return complete_play(s, seat, min(cards, key=lambda c: CARD_INFO[c].draw))
        return DRAW
    if cards:
        # a knock-out when one is on offer; else keep the big draw cards for stacks
        victim = len(s.hands[s.next_active(seat)])
        limit = s.rules.mercy_limit
        for c in cards:
            if CARD_INFO[c].draw and victim + CARD_INFO[c].draw >= limit:
                return complete_play(s, seat, c)
        calm = [c for c in cards if CARD_INFO[c].draw < 4] or cards
        return complete_play(s, seat, calm[rng.randrange(len(calm))])
    if draw_refusal(s, seat) is None:
        return DRAW
    if pass_refusal(s, seat) is None:
        return PASS
    return DRAW  # pragma: no cover - a legal move always exists


def play_out(s: GameState, rng: random.Random, max_actions: int) -> GameState:
    """Play ``s`` forward in place with :func:`rollout_action` for every seat."""
    for _ in range(max_actions):
        if s.winner is not None:
            break
        seat = s.pending.player if s.pending is not None else s.turn
        apply(s, s.players[seat], rollout_action(s, seat, rng), 0, in_place=True)
    return s
