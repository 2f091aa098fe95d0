"""``legal_actions(state, player)``: the one answer to "may they do this?" for the server's
hints, the bots and the tests.

Plays are listed in their shortest form: a card that needs a choice is listed once without it
(playing it pauses on the choice, and the ``choose`` actions are then listed). ``play`` with
the choice filled in, or with ``uno: true``, is just as legal.
"""

from __future__ import annotations

from ._members import (
    A_CATCH,
    A_CHOOSE,
    A_PLAY,
    C_COLOR,
    C_ROULETTE_COLOR,
    C_TARGET,
    DRAW_ONE,
    DRAW_UNTIL_PLAYABLE,
    SEVEN_MAY_SWAP,
)
from .actions import CANCEL, DRAW, PASS, UNO, Action
from .cards import CARD_INFO, COLOR_LETTERS, LETTER_TO_NAME
from .plays import can_play, discard_set, stackable
from .state import GameState

_PLAYS = {code: Action(A_PLAY, code) for code in CARD_INFO}
_COLORS = tuple(Action(A_CHOOSE, color=LETTER_TO_NAME[c]) for c in COLOR_LETTERS)


def legal_actions(s: GameState, player: str, now_ms: int | None = None) -> list[Action]:
    """Every action ``player`` may take now, out-of-turn ``uno``/``catch`` included.

    With ``now_ms``, catches of players whose window has run out are left out.
    """
    if s.winner is not None:
        return []
    try:
        seat = s.players.index(player)
    except ValueError:
        return []
    if s.eliminated[seat]:
        return []
    out: list[Action] = []
    if s.exposed:
        for who, until in s.exposed:
            if who != seat and (now_ms is None or now_ms < until):
                out.append(Action(A_CATCH, target=s.players[who]))
    hand = s.hands[seat]
    if len(hand) == 1 and not s.uno[seat]:
        out.append(UNO)
    pending = s.pending
    if pending is not None:
        if pending.player == seat:
            out.extend(choice_actions(s))
            if pending.choice is not C_ROULETTE_COLOR:
                out.append(CANCEL)
        return out
    if s.turn != seat:
        return out
    if s.stack_last:  # answer the stack or take it (draw); never pass
        out.extend(map(_PLAYS.__getitem__, dict.fromkeys(filter(stackable(s).__contains__, hand))))
        out.append(DRAW)
        return out
    # The turn's plays, draw and pass in one pass over the state: the same tests as
    # playable_cards, draw_refusal and pass_refusal (which ``apply`` uses to refuse), inlined
    # because this runs before every move of every bot and simulation. The property tests hold
    # them to the same answers.
    drawn = s.drawn
    if s.drew and s.rules.draw is DRAW_ONE:  # drew this turn: play the drawn card or pass
        if drawn is not None and can_play(s, drawn):
            out.append(_PLAYS[drawn])
        out.append(PASS)
        return out
    if drawn is not None:  # until_playable: the drawn card must be played
        if can_play(s, drawn):
            out.append(_PLAYS[drawn])
        return out
    # filter() with a C-level predicate: hands of 20+ cards are common in No Mercy
    before = len(out)
    out.extend(map(_PLAYS.__getitem__, dict.fromkeys(filter(s.matching_cards().__contains__, hand))))
    if len(out) > before:
        if s.rules.draw is not DRAW_UNTIL_PLAYABLE and s.can_refill():
            out.append(DRAW)
    elif s.can_refill():
        out.append(DRAW)
    else:
        out.append(PASS)  # nothing to play and nothing to draw
    return out


def playable_cards(s: GameState, seat: int) -> list[str]:
    """The distinct cards of ``seat``'s hand that may be played now (same test as ``play``)."""
    if s.winner is not None or s.pending is not None or s.turn != seat:
        return []
    hand = s.hands[seat]
    if s.stack_last:
        return list(dict.fromkeys(filter(stackable(s).__contains__, hand)))
    if s.drawn is not None:
        return [s.drawn] if can_play(s, s.drawn) else []
    if s.drew and s.rules.draw is DRAW_ONE:
        return []
    # filter() with a C-level predicate: hands of 20+ cards are common in No Mercy
    return list(dict.fromkeys(filter(s.matching_cards().__contains__, hand)))


def choice_actions(s: GameState) -> list[Action]:
    """The ``choose`` actions that answer the pending choice."""
    pending = s.pending
    if pending is None:
        return []
    seat = pending.player
    if pending.choice in (C_COLOR, C_ROULETTE_COLOR):
        return list(_COLORS)
    if pending.choice is C_TARGET:
        may_keep = s.rules.seven is SEVEN_MAY_SWAP
        return [Action(A_CHOOSE, target=s.players[i]) for i in s.active_seats()
                if i != seat or may_keep]
    info = CARD_INFO[pending.card]
    tops = dict.fromkeys([pending.card, *discard_set(s.hands[seat], pending.card, info)])
    return [Action(A_CHOOSE, top=c) for c in tops]


