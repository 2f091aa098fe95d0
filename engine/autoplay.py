"""What the server does for a player who does not act (rules.md "Choices", "Timers"): resolve a
waiting choice the default way; when the turn time ran out, take a stack, else play a random
playable card (drawing until one is), calling UNO. Randomness comes from the state's own
generator, so a recorded game replays exactly."""

from __future__ import annotations

from ._members import (
    A_CHOOSE,
    A_PLAY,
    C_COLOR,
    C_ROULETTE_COLOR,
    C_TARGET,
    K_DISCARD_ALL,
    K_NUMBER,
    K_ROULETTE,
    ROULETTE_BY_TARGET,
    SEVEN_OFF,
    TOP_CHOOSE,
)
from .actions import DRAW, PASS, Action
from .cards import CARD_INFO, most_held_color
from .errors import IllegalAction
from .plays import can_play
from .refusals import verify_draw
from .rng import Rng
from .state import GameState


def _smallest_hand_opponent(s: GameState, seat: int) -> str:
    """The active player other than ``seat`` with the fewest cards, ties by seat order."""
    others = [i for i in s.active_seats() if i != seat]
    return s.players[min(others, key=lambda i: (len(s.hands[i]), i))]


def default_choice(s: GameState) -> Action:
    """rules.md "Choices": how the server resolves a pending choice for an absent player.

    Colour: the colour the chooser holds most of (ties in the order red, yellow, green, blue);
    target: the active opponent with the fewest cards (ties by seat order); top: the Discard All.
    """
    pending = s.pending
    assert pending is not None
    choice = pending.choice
    if choice is C_COLOR or choice is C_ROULETTE_COLOR:
        return Action(A_CHOOSE, color=most_held_color(s.hands[pending.player]))
    if choice is C_TARGET:
        return Action(A_CHOOSE, target=_smallest_hand_opponent(s, pending.player))
    return Action(A_CHOOSE, top=pending.card)


def complete_play(s: GameState, seat: int, card: str, uno: bool = True) -> Action:
    """A ``play`` of ``card`` carrying every choice it needs, each made as :func:`default_choice`
    would make it."""
    info = CARD_INFO[card]
    rules = s.rules
    color = target = top = None
    if info.wild and not (info.kind is K_ROULETTE and rules.roulette_chooser is ROULETTE_BY_TARGET):
        color = most_held_color(s.hands[seat])
    if info.kind is K_NUMBER and info.number == 7 and rules.seven is not SEVEN_OFF:
        target = _smallest_hand_opponent(s, seat)
    if info.kind is K_DISCARD_ALL and rules.discard_all_top is TOP_CHOOSE:
        top = card
    return Action(A_PLAY, card, color, target, top, uno)


def auto_action(s: GameState, seat: int) -> Action:
    """The server's step for ``seat``: the default choice, taking a stack, a random playable
    card, else a draw, else a pass. Advances the state's generator when it picks a card."""
    if s.pending is not None:
        return default_choice(s)
    if s.stack_last:
        return DRAW
    playable = [c for c in dict.fromkeys(s.hands[seat]) if can_play(s, c)]
    if playable:
        rng = Rng(s.seed, s.rng_counter)
        card = playable[rng.below(len(playable))]
        s.rng_counter = rng.counter
        return complete_play(s, seat, card)
    try:
        verify_draw(s, seat)
    except IllegalAction:
        return PASS
    return DRAW
