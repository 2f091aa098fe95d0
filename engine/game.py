"""Creating a round and applying actions to it: the engine's public verbs.

``apply(state, player, action, now_ms)`` returns a :class:`Transition` (new state, events) or
raises :class:`~engine.errors.IllegalAction`; the given state is never changed, so a refused
action leaves it exactly as it was. Time enters only as ``now_ms``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from .actions import Action, ActionKind
from .cards import CARD_INFO, COLOR_LETTERS, LETTER_TO_NAME, NAME_TO_LETTER, PLAYABLE, Kind, build_deck
from .errors import ErrorCode, IllegalAction
from .events import Event, EventKind
from .events import new_record as _new
from .mechanics import (
    begin_turn,
    draw_cards,
    eliminate,
    end_round,
    fewest_cards,
    hand_changed,
    is_playable,
)
from .plays import penalty_draw, play_card, roulette, verify_play, verify_target
from .rng import Rng
from .rules import DrawRule, FirstCard, Rules
from .state import Choice, GameState

# Enum members bound once: attribute access on an Enum class costs ~150 ns on CPython 3.11,
# and the rules are checked on every move of every simulated game.
A_CANCEL = ActionKind.CANCEL
A_CATCH = ActionKind.CATCH
A_CHOOSE = ActionKind.CHOOSE
A_DRAW = ActionKind.DRAW
A_EXPIRE = ActionKind.EXPIRE
A_PASS = ActionKind.PASS
A_PLAY = ActionKind.PLAY
A_RESOLVE = ActionKind.RESOLVE
A_TIMEOUT = ActionKind.TIMEOUT
A_UNO = ActionKind.UNO
C_COLOR = Choice.COLOR
C_ROULETTE_COLOR = Choice.ROULETTE_COLOR
C_TARGET = Choice.TARGET
C_TOP = Choice.TOP
DRAW_ONE = DrawRule.ONE
DRAW_UNTIL_PLAYABLE = DrawRule.UNTIL_PLAYABLE
EV_CANCELLED = EventKind.CANCELLED
EV_CAUGHT = EventKind.CAUGHT
EV_DREW = EventKind.DREW
EV_PASSED = EventKind.PASSED
EV_ROUND_OVER = EventKind.ROUND_OVER
EV_MATCH_OVER = EventKind.MATCH_OVER
EV_REVERSED = EventKind.REVERSED
EV_SKIPPED = EventKind.SKIPPED
EV_STARTED = EventKind.STARTED
EV_TIMED_OUT = EventKind.TIMED_OUT
EV_TOOK_STACK = EventKind.TOOK_STACK
EV_UNO = EventKind.UNO
EV_WINDOW_CLOSED = EventKind.WINDOW_CLOSED
FIRST_APPLY = FirstCard.APPLY
K_DRAW2 = Kind.DRAW2
K_DRAW4 = Kind.DRAW4
K_NUMBER = Kind.NUMBER
K_REVERSE = Kind.REVERSE
K_SKIP = Kind.SKIP
K_SKIP_ALL = Kind.SKIP_ALL

MAX_SEATS = 20

#: Why an action is refused: an error code and a message (raised as IllegalAction by verify_*).
Refusal = tuple[ErrorCode, str]


class Transition(NamedTuple):
    state: GameState
    events: tuple[Event, ...]


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
    events.insert(0, _new(Event, (EV_STARTED, {
        "dealer": players[dealer], "top": s.discard[-1], "color": LETTER_TO_NAME[s.color]}, None, None)))
    return _new(Transition, (s, tuple(events)))


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
        events.append(_new(Event, (EV_SKIPPED, {"players": [s.players[first]]}, None, None)))
        begin_turn(s, s.next_active(first), now_ms)
    elif kind is K_REVERSE:
        s.direction = -1
        events.append(_new(Event, (EV_REVERSED, {"direction": -1}, None, None)))
        begin_turn(s, s.dealer, now_ms)
    elif kind is K_SKIP_ALL:
        begin_turn(s, s.dealer, now_ms)
    elif kind in (K_DRAW2, K_DRAW4):
        penalty_draw(s, events, first, top.draw, now_ms)
        if s.winner is None:
            events.append(_new(Event, (EV_SKIPPED, {"players": [s.players[first]]}, None, None)))
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
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise IllegalAction(ErrorCode.BAD_MESSAGE, "not a game action")
    if player is None:
        if kind not in _SYSTEM:
            raise IllegalAction(ErrorCode.NOT_A_PLAYER, "only players act")
        seat = -1
    else:
        if kind in _SYSTEM:
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
    return _new(Transition, (s, tuple(events)))


def _settle_end(s: GameState, events: list[Event]) -> None:
    """A round can end in the middle of a step (a pile rebuild that finds the round going in
    circles): nothing is due afterwards, and ``round_over`` / ``match_over`` come last."""
    s.turn_deadline = None
    s.drew, s.drawn = False, None
    last = [e for e in events if e.kind is EV_ROUND_OVER or e.kind is EV_MATCH_OVER]
    if last and events[-len(last):] != last:
        events[:] = [e for e in events if e not in last] + last


def _verify_turn(s: GameState, seat: int) -> None:
    pending = s.pending
    if pending is not None:
        if pending.player == seat:
            raise IllegalAction(ErrorCode.CHOICE_PENDING, f"choose a {pending.choice.value} first")
        raise IllegalAction(ErrorCode.NOT_YOUR_TURN, "waiting for another player's choice")
    if s.turn != seat:
        raise IllegalAction(ErrorCode.NOT_YOUR_TURN, "it is not your turn")


def _do_play(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    if s.pending is not None or s.turn != seat:
        _verify_turn(s, seat)
    play_card(s, events, seat, verify_play(s, seat, action), now_ms)


def draw_refusal(s: GameState, seat: int) -> Refusal | None:
    """Why ``seat`` may not draw now, or ``None`` (rules.md option ``draw``; with a stack: take it).
    The turn itself is checked by the caller."""
    if s.stack_last:
        return None
    mode = s.rules.draw
    if mode is DRAW_UNTIL_PLAYABLE:
        if s.drawn is not None:
            return (ErrorCode.MUST_PLAY_DRAWN, "play the card you drew")
        if not PLAYABLE[s.color][s.discard[-1]].isdisjoint(s.hands[seat]):
            return (ErrorCode.DRAW_NOT_ALLOWED, "you have a playable card")
    elif mode is DRAW_ONE and s.drew:
        return (ErrorCode.DRAW_NOT_ALLOWED, "you already drew this turn")
    if not (s.draw_pile or len(s.discard) > 1 or s.set_aside):
        return (ErrorCode.DRAW_NOT_ALLOWED, "no card is left to draw")
    return None


def verify_draw(s: GameState, seat: int) -> None:
    if s.pending is not None or s.turn != seat:
        _verify_turn(s, seat)
    refusal = draw_refusal(s, seat)
    if refusal is not None:
        raise IllegalAction(*refusal)


def _do_draw(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    verify_draw(s, seat)
    player = s.players[seat]
    s.passes = 0
    if s.stack_last:
        cards, busted = draw_cards(s, events, seat, s.stack_total)
        s.stack_total = s.stack_last = 0
        events.append(_new(Event, (EV_TOOK_STACK, {"player": player, "count": len(cards)},
                            player, {"cards": cards})))
        if busted:
            eliminate(s, events, seat, now_ms)
        elif s.winner is None:
            begin_turn(s, s.next_active(seat), now_ms)
        return
    mode = s.rules.draw
    cards, busted = draw_cards(s, events, seat, 1 << 30 if mode is DRAW_UNTIL_PLAYABLE else 1,
                               until_playable=True)
    events.append(_new(Event, (EV_DREW, {"player": player, "count": len(cards)}, player, {"cards": cards})))
    if busted:
        eliminate(s, events, seat, now_ms)
        return
    if s.winner is not None:  # the rebuild found the round going in circles: it is over
        return
    s.drew = True
    if mode is DRAW_ONE or (mode is DRAW_UNTIL_PLAYABLE and cards and is_playable(s, cards[-1])):
        s.drawn = cards[-1]


def pass_refusal(s: GameState, seat: int) -> Refusal | None:
    """Why ``seat`` may not pass, or ``None``: ``pass`` is legal after a ``one`` draw, or when
    one can neither play nor draw (rules.md "A turn"); never against a stack."""
    if s.stack_last:
        return (ErrorCode.STACK_PENDING, "a stack is aimed at you: answer it or take it")
    if s.rules.draw is DRAW_ONE and s.drew:
        return None
    if s.drawn is not None:
        return (ErrorCode.MUST_PLAY_DRAWN, "play the card you drew")
    if s.draw_pile or len(s.discard) > 1 or s.set_aside:
        return (ErrorCode.PASS_NOT_ALLOWED, "you can still draw")
    if not PLAYABLE[s.color][s.discard[-1]].isdisjoint(s.hands[seat]):
        return (ErrorCode.PASS_NOT_ALLOWED, "you have a playable card")
    return None


def verify_pass(s: GameState, seat: int) -> None:
    _verify_turn(s, seat)
    refusal = pass_refusal(s, seat)
    if refusal is not None:
        raise IllegalAction(*refusal)


def _do_pass(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    verify_pass(s, seat)
    events.append(_new(Event, (EV_PASSED, {"player": s.players[seat]}, None, None)))
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
        play = _new(Action, (A_PLAY, pending.card, action.color, None, None, pending.uno))
    elif choice is C_TARGET:
        if action.target is None:
            raise IllegalAction(ErrorCode.BAD_TARGET, "choose a target")
        play = _new(Action, (A_PLAY, pending.card, None, action.target, None, pending.uno))
    else:
        if action.top is None:
            raise IllegalAction(ErrorCode.BAD_TOP, "choose a top")
        play = _new(Action, (A_PLAY, pending.card, None, None, action.top, pending.uno))
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
    events.append(_new(Event, (EV_CANCELLED, {"player": s.players[seat]}, None, None)))


def _do_uno(s: GameState, events: list[Event], seat: int, action: Action, now_ms: int) -> None:
    if len(s.hands[seat]) != 1:
        raise IllegalAction(ErrorCode.NOT_ONE_CARD, "call UNO when you hold one card")
    if s.uno[seat]:
        raise IllegalAction(ErrorCode.ALREADY_CALLED, "you already called UNO")
    uno = s.uno[:]
    uno[seat] = True
    s.uno = uno
    s.exposed = [e for e in s.exposed if e[0] != seat]
    events.append(_new(Event, (EV_UNO, {"player": s.players[seat]}, None, None)))


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
    events.append(_new(Event, (EV_CAUGHT, {"player": victim, "by": s.players[seat], "count": len(cards)},
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
        events.append(_new(Event, (EV_WINDOW_CLOSED, {"player": s.players[who]}, None, None)))


def default_choice(s: GameState) -> Action:
    """rules.md "Choices": how the server resolves a pending choice for an absent player.

    Colour: the colour the chooser holds most of (ties in the order red, yellow, green, blue);
    target: the active opponent with the fewest cards (ties by seat order); top: the Discard All.
    """
    pending = s.pending
    assert pending is not None
    seat = pending.player
    if pending.choice in (C_COLOR, C_ROULETTE_COLOR):
        counts = {c: 0 for c in COLOR_LETTERS}
        for card in s.hands[seat]:
            letter = CARD_INFO[card].color
            if letter in counts:
                counts[letter] += 1
        best = max(COLOR_LETTERS, key=lambda c: (counts[c], -COLOR_LETTERS.index(c)))
        return Action(A_CHOOSE, color=LETTER_TO_NAME[best])
    if pending.choice is C_TARGET:
        others = [i for i in s.active_seats() if i != seat]
        target = min(others, key=lambda i: (len(s.hands[i]), i))
        return Action(A_CHOOSE, target=s.players[target])
    return Action(A_CHOOSE, top=pending.card)


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
    events.append(_new(Event, (EV_TIMED_OUT, {"player": s.players[seat]}, None, None)))
    from .autoplay import auto_action  # late import: autoplay builds on this module

    for _ in range(4 * s.deck_size + 8):  # each step ends the turn or draws a card
        ends_turn = s.stack_last > 0 or s.pending is not None
        act = auto_action(s, seat)
        ends_turn = ends_turn or act.kind is not A_DRAW
        _HANDLERS[act.kind](s, events, seat, act, now_ms)
        if ends_turn or s.winner is not None or s.eliminated[seat] or s.turn != seat:
            return
    raise AssertionError("timeout did not end the turn")  # pragma: no cover


_HANDLERS: dict[ActionKind, Callable[[GameState, list[Event], int, Action, int], None]] = {
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
_SYSTEM = frozenset({A_EXPIRE, A_TIMEOUT, A_RESOLVE})


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


__all__ = [
    "Transition",
    "apply",
    "default_choice",
    "draw_refusal",
    "hand_changed",
    "new_game",
    "next_deadline",
    "pass_refusal",
    "verify_draw",
    "verify_pass",
    "verify_target",
]
