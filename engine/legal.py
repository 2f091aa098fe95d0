"""``legal_actions(state, player)``: the one answer to "may they do this?" for the server's
hints, the bots and the tests.

Plays are listed in their shortest form: a card that needs a choice is listed once without it
(playing it pauses on the choice, and the ``choose`` actions are then listed). ``play`` with
the choice filled in, or with ``uno: true``, is just as legal.
"""

from __future__ import annotations

from .actions import Action, ActionKind
from .cards import CARD_INFO, COLOR_LETTERS, LETTER_TO_NAME, can_play_on
from .game import draw_refusal, pass_refusal
from .plays import can_stack, discard_set
from .rules import DrawRule, Seven
from .state import Choice, GameState

_DRAW = Action(ActionKind.DRAW)
_PASS = Action(ActionKind.PASS)
_UNO = Action(ActionKind.UNO)
_CANCEL = Action(ActionKind.CANCEL)
_PLAYS = {code: Action(ActionKind.PLAY, code) for code in CARD_INFO}
_COLORS = tuple(Action(ActionKind.CHOOSE, color=LETTER_TO_NAME[c]) for c in COLOR_LETTERS)


def legal_actions(s: GameState, player: str, now_ms: int | None = None) -> list[Action]:
    """Every action ``player`` may take now, out-of-turn ``uno``/``catch`` included.

    With ``now_ms``, catches of players whose window has run out are left out.
    """
    if s.winner is not None:
        return []
    seat = s.seat_of(player)
    if seat is None or s.eliminated[seat]:
        return []
    out: list[Action] = []
    if s.exposed:
        for who, until in s.exposed:
            if who != seat and (now_ms is None or now_ms < until):
                out.append(Action(ActionKind.CATCH, target=s.players[who]))
    hand = s.hands[seat]
    if len(hand) == 1 and not s.uno[seat]:
        out.append(_UNO)
    pending = s.pending
    if pending is not None:
        if pending.player == seat:
            out.extend(choice_actions(s))
            if pending.choice is not Choice.ROULETTE_COLOR:
                out.append(_CANCEL)
        return out
    if s.turn != seat:
        return out
    out.extend(_PLAYS[c] for c in playable_cards(s, seat))
    if draw_refusal(s, seat) is None:
        out.append(_DRAW)
    if not s.stack_last and pass_refusal(s, seat) is None:
        out.append(_PASS)
    return out


def playable_cards(s: GameState, seat: int) -> list[str]:
    """The distinct cards of ``seat``'s hand that may be played now (same test as ``play``)."""
    if s.winner is not None or s.pending is not None or s.turn != seat:
        return []
    hand = s.hands[seat]
    if s.stack_last:
        return [c for c in dict.fromkeys(hand) if can_stack(s, CARD_INFO[c])]
    if s.drawn is not None:
        return [s.drawn] if can_play_on(CARD_INFO[s.drawn], CARD_INFO[s.discard[-1]], s.color) else []
    if s.drew and s.rules.draw is DrawRule.ONE:
        return []
    color = s.color
    symbol = CARD_INFO[s.discard[-1]].symbol
    out = []
    for c in dict.fromkeys(hand):
        info = CARD_INFO[c]
        if info.wild or info.color == color or (info.symbol is not None and info.symbol == symbol):
            out.append(c)
    return out


def choice_actions(s: GameState) -> list[Action]:
    """The ``choose`` actions that answer the pending choice."""
    pending = s.pending
    if pending is None:
        return []
    seat = pending.player
    if pending.choice in (Choice.COLOR, Choice.ROULETTE_COLOR):
        return list(_COLORS)
    if pending.choice is Choice.TARGET:
        may_keep = s.rules.seven is Seven.MAY_SWAP
        return [Action(ActionKind.CHOOSE, target=s.players[i]) for i in s.active_seats()
                if i != seat or may_keep]
    info = CARD_INFO[pending.card]
    tops = dict.fromkeys([pending.card, *discard_set(s.hands[seat], pending.card, info)])
    return [Action(ActionKind.CHOOSE, top=c) for c in tops]


