"""What the server does for a player whose turn time ran out (rules.md "Timers"): resolve a
waiting choice, take a stack, else play a random playable card (drawing until one is), calling
UNO. Randomness comes from the state's own generator, so a recorded game replays exactly."""

from __future__ import annotations

from .actions import Action, ActionKind
from .cards import CARD_INFO, Kind
from .errors import IllegalAction
from .game import default_choice, verify_draw
from .plays import can_play
from .rng import Rng
from .rules import DiscardAllTop, RouletteChooser, Seven
from .state import GameState

# Enum members bound once: attribute access on an Enum class costs ~150 ns on CPython 3.11,
# and the rules are checked on every move of every simulated game.
A_DRAW = ActionKind.DRAW
A_PASS = ActionKind.PASS
A_PLAY = ActionKind.PLAY
TOP_CHOOSE = DiscardAllTop.CHOOSE
K_DISCARD_ALL = Kind.DISCARD_ALL
K_NUMBER = Kind.NUMBER
K_ROULETTE = Kind.ROULETTE
ROULETTE_BY_TARGET = RouletteChooser.TARGET
SEVEN_OFF = Seven.OFF

_COLOR_NAMES = ("red", "yellow", "green", "blue")


def _most_held_color(s: GameState, seat: int) -> str:
    counts = [0, 0, 0, 0]
    for card in s.hands[seat]:
        letter = CARD_INFO[card].color
        if letter != "w":
            counts["rygb".index(letter)] += 1
    return _COLOR_NAMES[counts.index(max(counts))]


def complete_play(s: GameState, seat: int, card: str, uno: bool = True) -> Action:
    """A ``play`` of ``card`` carrying every choice it needs, made the server's default way."""
    info = CARD_INFO[card]
    color = target = top = None
    if info.wild and not (info.kind is K_ROULETTE
                          and s.rules.roulette_chooser is ROULETTE_BY_TARGET):
        color = _most_held_color(s, seat)
    if info.kind is K_NUMBER and info.number == 7 and s.rules.seven is not SEVEN_OFF:
        others = [i for i in s.active_seats() if i != seat]
        target = s.players[min(others, key=lambda i: (len(s.hands[i]), i))]
    if info.kind is K_DISCARD_ALL and s.rules.discard_all_top is TOP_CHOOSE:
        top = card
    return Action(A_PLAY, card, color, target, top, uno)


def auto_action(s: GameState, seat: int) -> Action:
    if s.pending is not None:
        return default_choice(s)
    if s.stack_last:
        return Action(A_DRAW)
    playable = [c for c in dict.fromkeys(s.hands[seat]) if can_play(s, c)]
    if playable:
        rng = Rng(s.seed, s.rng_counter)
        card = playable[rng.below(len(playable))]
        s.rng_counter = rng.counter
        return complete_play(s, seat, card)
    try:
        verify_draw(s, seat)
    except IllegalAction:
        return Action(A_PASS)
    return Action(A_DRAW)
