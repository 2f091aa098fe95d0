"""Why a seat may not take its turn, draw or pass now (rules.md "A turn", option ``draw``).

Each ``*_refusal`` returns ``None`` or the error code and message a refusal carries; the
``verify_*`` functions raise it as :class:`~engine.errors.IllegalAction`. ``legal_actions``
makes the same tests inline (the property tests hold the two to the same answers).
"""

from __future__ import annotations

from ._members import DRAW_ONE, DRAW_UNTIL_PLAYABLE
from .errors import ErrorCode, IllegalAction
from .state import GameState

#: Why an action is refused: an error code and a message (raised as IllegalAction by verify_*).
Refusal = tuple[ErrorCode, str]


def verify_turn(s: GameState, seat: int) -> None:
    """``seat`` is the turn player and no choice is waiting."""
    pending = s.pending
    if pending is not None:
        if pending.player == seat:
            raise IllegalAction(ErrorCode.CHOICE_PENDING, f"choose a {pending.choice.value} first")
        raise IllegalAction(ErrorCode.NOT_YOUR_TURN, "waiting for another player's choice")
    if s.turn != seat:
        raise IllegalAction(ErrorCode.NOT_YOUR_TURN, "it is not your turn")


def draw_refusal(s: GameState, seat: int) -> Refusal | None:
    """Why ``seat`` may not draw now, or ``None`` (rules.md option ``draw``; with a stack: take it).
    The turn itself is checked by the caller."""
    if s.stack_last:
        return None
    mode = s.rules.draw
    if mode is DRAW_UNTIL_PLAYABLE:
        if s.drawn is not None:
            return (ErrorCode.MUST_PLAY_DRAWN, "play the card you drew")
        if not s.matching_cards().isdisjoint(s.hands[seat]):
            return (ErrorCode.DRAW_NOT_ALLOWED, "you have a playable card")
    elif mode is DRAW_ONE and s.drew:
        return (ErrorCode.DRAW_NOT_ALLOWED, "you already drew this turn")
    if not s.can_refill():
        return (ErrorCode.DRAW_NOT_ALLOWED, "no card is left to draw")
    return None


def verify_draw(s: GameState, seat: int) -> None:
    if s.pending is not None or s.turn != seat:
        verify_turn(s, seat)
    refusal = draw_refusal(s, seat)
    if refusal is not None:
        raise IllegalAction(*refusal)


def pass_refusal(s: GameState, seat: int) -> Refusal | None:
    """Why ``seat`` may not pass, or ``None``: ``pass`` is legal after a ``one`` draw, or when
    one can neither play nor draw (rules.md "A turn"); never against a stack."""
    if s.stack_last:
        return (ErrorCode.STACK_PENDING, "a stack is aimed at you: answer it or take it")
    if s.rules.draw is DRAW_ONE and s.drew:
        return None
    if s.drawn is not None:
        return (ErrorCode.MUST_PLAY_DRAWN, "play the card you drew")
    if s.can_refill():
        return (ErrorCode.PASS_NOT_ALLOWED, "you can still draw")
    if not s.matching_cards().isdisjoint(s.hands[seat]):
        return (ErrorCode.PASS_NOT_ALLOWED, "you have a playable card")
    return None


def verify_pass(s: GameState, seat: int) -> None:
    verify_turn(s, seat)
    refusal = pass_refusal(s, seat)
    if refusal is not None:
        raise IllegalAction(*refusal)
