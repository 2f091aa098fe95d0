"""One handler per action kind: each verifies its action against the rules, then applies it
to the (already copied) state and appends the events. :func:`engine.game.apply` picks the
handler; a handler changes nothing before its checks pass.
"""

from __future__ import annotations

from collections.abc import Callable

from ._members import (
    A_CANCEL,
    A_CATCH,
    A_CHOOSE,
    A_DRAW,
    A_EXPIRE,
    A_PASS,
    A_PLAY,
    A_RESOLVE,
    A_TIMEOUT,
    A_UNO,
    C_COLOR,
    C_ROULETTE_COLOR,
    C_TARGET,
    DRAW_ONE,
    DRAW_UNTIL_PLAYABLE,
    EV_CANCELLED,
    EV_CAUGHT,
    EV_DREW,
    EV_PASSED,
    EV_TIMED_OUT,
    EV_TOOK_STACK,
    EV_UNO,
    EV_WINDOW_CLOSED,
)
from .actions import Action, ActionKind, new_action
from .autoplay import auto_action, default_choice
from .cards import NAME_TO_LETTER
from .errors import ErrorCode, IllegalAction
from .events import Event, new_event
from .mechanics import begin_turn, draw_cards, eliminate, end_round, fewest_cards
from .plays import can_play, play_card, roulette, verify_play
from .refusals import verify_draw, verify_pass, verify_turn
from .state import GameState

Handler = Callable[[GameState, list[Event], int, Action, int], None]


# -- a seated player's actions ----------------------------------------------------------------

def _do_play(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    if s.pending is not None or s.turn != seat:
        verify_turn(s, seat)
    play_card(s, events, seat, verify_play(s, seat, action), now_ms)


def _do_draw(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    verify_draw(s, seat)
    player = s.players[seat]
    s.passes = 0
    if s.stack_last:
        cards, busted = draw_cards(s, events, seat, s.stack_total)
        s.stack_total = s.stack_last = 0
        events.append(new_event((EV_TOOK_STACK, {"player": player, "count": len(cards)},
                                 player, {"cards": cards})))
        if busted:
            eliminate(s, events, seat, now_ms)
        elif s.winner is None:
            begin_turn(s, s.next_active(seat), now_ms)
        return
    mode = s.rules.draw
    cards, busted = draw_cards(s, events, seat, 1 << 30 if mode is DRAW_UNTIL_PLAYABLE else 1,
                               until_playable=True)
    events.append(new_event((EV_DREW, {"player": player, "count": len(cards)}, player, {"cards": cards})))
    if busted:
        eliminate(s, events, seat, now_ms)
        return
    if s.winner is not None:  # the rebuild found the round going in circles: it is over
        return
    s.drew = True
    if mode is DRAW_ONE or (mode is DRAW_UNTIL_PLAYABLE and cards and can_play(s, cards[-1])):
        s.drawn = cards[-1]


def _do_pass(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    verify_pass(s, seat)
    events.append(new_event((EV_PASSED, {"player": s.players[seat]}, None, None)))
    s.passes += 1
    active = s.active_seats()
    if s.passes >= len(active):
        # every active player passed in a row: fewest cards wins, ties from the last passer on
        end_round(s, events, fewest_cards(s, seat), "deadlock")
        return
    begin_turn(s, s.next_active(seat), now_ms)


_CHOICE_FIELDS = ("color", "target", "top")
_CHOICE_CODES = {"color": ErrorCode.BAD_COLOR, "target": ErrorCode.BAD_TARGET, "top": ErrorCode.BAD_TOP}


def _do_choose(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    pending = s.pending
    if pending is None or pending.player != seat:
        raise IllegalAction(ErrorCode.NO_CHOICE_PENDING, "nothing waits for your choice")
    choice = pending.choice
    own = "color" if choice is C_COLOR or choice is C_ROULETTE_COLOR else choice.value
    if action.color is not None or action.target is not None or action.top is not None:
        for name in _CHOICE_FIELDS:  # a field of another choice: refused with the choice's own code
            if name != own and getattr(action, name) is not None:
                raise IllegalAction(_CHOICE_CODES[own], f"a {choice.value} choice takes no {name}")
    if choice is C_ROULETTE_COLOR:
        letter = NAME_TO_LETTER.get(action.color or "")
        if letter is None:
            raise IllegalAction(ErrorCode.BAD_COLOR, "name a colour: red, yellow, green or blue")
        s.pending = None
        roulette(s, events, seat, letter, pending.by, now_ms)
        return
    if choice is C_COLOR:
        if action.color is None:
            raise IllegalAction(ErrorCode.BAD_COLOR, "choose a color")
        play = new_action((A_PLAY, pending.card, action.color, None, None, pending.uno))
    elif choice is C_TARGET:
        if action.target is None:
            raise IllegalAction(ErrorCode.BAD_TARGET, "choose a target")
        play = new_action((A_PLAY, pending.card, None, action.target, None, pending.uno))
    else:
        if action.top is None:
            raise IllegalAction(ErrorCode.BAD_TOP, "choose a top")
        play = new_action((A_PLAY, pending.card, None, None, action.top, pending.uno))
    verified = verify_play(s, seat, play)
    s.pending = None
    play_card(s, events, seat, verified, now_ms)


def _do_cancel(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    pending = s.pending
    if pending is None or pending.player != seat:
        raise IllegalAction(ErrorCode.NO_CHOICE_PENDING, "nothing waits for your choice")
    if pending.choice is C_ROULETTE_COLOR:
        raise IllegalAction(ErrorCode.CANCEL_NOT_ALLOWED, "the roulette's colour must be named")
    s.pending = None
    events.append(new_event((EV_CANCELLED, {"player": s.players[seat]}, None, None)))


def _do_uno(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    if len(s.hands[seat]) != 1:
        raise IllegalAction(ErrorCode.NOT_ONE_CARD, "call UNO when you hold one card")
    if s.uno[seat]:
        raise IllegalAction(ErrorCode.ALREADY_CALLED, "you already called UNO")
    uno = s.uno[:]
    uno[seat] = True
    s.uno = uno
    s.exposed = [e for e in s.exposed if e[0] != seat]
    events.append(new_event((EV_UNO, {"player": s.players[seat]}, None, None)))


def exposed_until(s: GameState, seat: int) -> int | None:
    for who, until in s.exposed:
        if who == seat:
            return until
    return None


def _do_catch(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    target = s.seat_of(action.target) if action.target is not None else None
    if target is None or target == seat:
        raise IllegalAction(ErrorCode.BAD_TARGET, "catch another player")
    until = exposed_until(s, target)
    if until is None or now_ms >= until:
        raise IllegalAction(ErrorCode.NOT_EXPOSED, "that player is not exposed")
    s.exposed = [e for e in s.exposed if e[0] != target]
    cards, busted = draw_cards(s, events, target, s.rules.uno_penalty)
    victim = s.players[target]
    events.append(new_event((EV_CAUGHT, {"player": victim, "by": s.players[seat], "count": len(cards)},
                             victim, {"cards": cards})))
    if busted:
        eliminate(s, events, target, now_ms)


# -- the server's timed steps -----------------------------------------------------------------

def _do_expire(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    due = [e for e in s.exposed if e[1] <= now_ms]
    if not due:
        raise IllegalAction(ErrorCode.TOO_EARLY, "no catch window has ended")
    s.exposed = [e for e in s.exposed if e[1] > now_ms]
    for who, _ in due:
        events.append(new_event((EV_WINDOW_CLOSED, {"player": s.players[who]}, None, None)))


def _do_resolve(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    if s.pending is None:
        raise IllegalAction(ErrorCode.NO_CHOICE_PENDING, "nothing waits for a choice")
    _do_choose(s, events, s.pending.player, default_choice(s), now_ms)


def _do_timeout(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    """rules.md "Timers": the server acts for the player: resolves their choice, takes a stack,
    else plays like an ``easy`` bot (a random playable card, drawing until one is playable)."""
    if s.turn_deadline is None or now_ms < s.turn_deadline:
        raise IllegalAction(ErrorCode.TOO_EARLY, "the turn time has not run out")
    seat = s.pending.player if s.pending is not None else s.turn
    events.append(new_event((EV_TIMED_OUT, {"player": s.players[seat]}, None, None)))
    for _ in range(4 * s.deck_size + 8):  # each step ends the turn or draws a card
        ends_turn = s.stack_last > 0 or s.pending is not None
        act = auto_action(s, seat)
        ends_turn = ends_turn or act.kind is not A_DRAW
        HANDLERS[act.kind](s, events, seat, act, now_ms)
        if ends_turn or s.winner is not None or s.eliminated[seat] or s.turn != seat:
            return
    raise AssertionError("timeout did not end the turn")  # pragma: no cover


#: The handler of each action kind: ``handler(state, events, seat, action, now_ms)``; ``seat``
#: is -1 for the server's own steps (:data:`~engine.actions.SYSTEM_KINDS`).
HANDLERS: dict[ActionKind, Handler] = {
    A_PLAY: _do_play,
    A_DRAW: _do_draw,
    A_PASS: _do_pass,
    A_CHOOSE: _do_choose,
    A_CANCEL: _do_cancel,
    A_UNO: _do_uno,
    A_CATCH: _do_catch,
    A_EXPIRE: _do_expire,
    A_TIMEOUT: _do_timeout,
    A_RESOLVE: _do_resolve,
}
