"""Playing a card (rules.md "A turn", "Draw stacking", "Card effects", "Choices").

:func:`verify_play` checks everything about a ``play`` before anything changes; :func:`play_card`
then either pauses on a pending choice or puts the card down and applies its effect.
"""

from __future__ import annotations

from typing import NamedTuple

from ._members import (
    C_COLOR,
    C_ROULETTE_COLOR,
    C_TARGET,
    C_TOP,
    EV_COLOR,
    EV_DISCARDED,
    EV_DREW,
    EV_EXPOSED,
    EV_PASSED_HANDS,
    EV_PLAYED,
    EV_REVERSED,
    EV_ROULETTE,
    EV_SKIPPED,
    EV_SWAPPED,
    EV_UNO,
    K_DISCARD_ALL,
    K_NUMBER,
    K_REVERSE,
    K_REVERSE4,
    K_ROULETTE,
    K_SKIP,
    K_SKIP_ALL,
    R4_SELF,
    ROULETTE_BY_TARGET,
    SEVEN_MAY_SWAP,
    SEVEN_OFF,
    STACKING_ANY,
    STACKING_LADDER,
    STACKING_OFF,
    STACKING_WILD_ANY,
    TOP_CHOOSE,
    ZERO_PASS,
)
from ._records import record_maker
from .actions import Action
from .cards import CARD_INFO, LETTER_TO_NAME, NAME_TO_LETTER, CardInfo
from .errors import ErrorCode, IllegalAction
from .events import Event, new_event
from .mechanics import begin_turn, draw_cards, eliminate, end_round, hand_changed
from .rules import Stacking
from .state import Choice, GameState, new_pending


class Play(NamedTuple):
    """A verified play: the choices it carries, in engine terms (colour letter, seat)."""

    card: str
    info: CardInfo
    color: str | None
    target: int | None
    top: str | None
    uno: bool
    needs: Choice | None  # the choice still missing (the game pauses on it)


#: ``new_play((card, info, color, target, top, uno, needs))``: a :class:`Play` from all its
#: fields, at C speed (see :func:`~engine._records.record_maker`).
new_play = record_maker(Play)


def _can_stack(mode: Stacking, last: int, info: CardInfo) -> bool:
    """rules.md "Draw stacking": what may answer a stack whose last draw value is ``last``."""
    if not info.draw:
        return False
    if mode is STACKING_LADDER:
        return info.draw >= last
    if mode is STACKING_WILD_ANY:
        return info.wild or info.draw >= last
    return mode is STACKING_ANY


_STACKABLE: dict[tuple[Stacking, int], frozenset[str]] = {
    (mode, last): frozenset(c for c, info in CARD_INFO.items() if _can_stack(mode, last, info))
    for mode in Stacking
    for last in sorted({info.draw for info in CARD_INFO.values() if info.draw})
}


def stackable(s: GameState) -> frozenset[str]:
    """Every card code that may answer the stack aimed at the turn player."""
    return _STACKABLE[s.rules.stacking, s.stack_last]


def answers(stacking: Stacking, last: int) -> frozenset[str]:
    """Every card code that may answer a stack whose last draw card draws ``last`` (none when
    ``last`` is no draw card's value), under ``stacking``: what a player who saw only the
    table's events knows of it."""
    return _STACKABLE.get((stacking, last), frozenset())


def can_play(s: GameState, card: str) -> bool:
    """The turn player may put ``card`` down now: it answers the stack aimed at them, else it
    matches the discard pile and is the card they drew, if a draw rule holds them to it.
    :func:`verify_play` makes the same tests, and says which one failed."""
    if s.stack_last:
        return card in _STACKABLE[s.rules.stacking, s.stack_last]
    if s.drawn is not None and card != s.drawn:
        return False
    return card in s.matching_cards()


def discard_set(hand: list[str], card: str, info: CardInfo) -> list[str]:
    """Discard All: the other cards of its colour in the hand (the card itself excluded once)."""
    others = [c for c in hand if CARD_INFO[c].color == info.color]
    others.remove(card)
    return others


def _color_letter(name: str | None) -> str | None:
    if name is None:
        return None
    letter = NAME_TO_LETTER.get(name)
    if letter is None:
        raise IllegalAction(ErrorCode.BAD_COLOR, "color must be red, yellow, green or blue")
    return letter


def verify_target(s: GameState, seat: int, target: str | None) -> int:
    """A 7's swap target: another active player (``may_swap``: oneself too, to keep the hand)."""
    t = s.seat_of(target) if target is not None else None
    if t is None or s.eliminated[t]:
        raise IllegalAction(ErrorCode.BAD_TARGET, "the target must be an active player")
    if t == seat and s.rules.seven is not SEVEN_MAY_SWAP:
        raise IllegalAction(ErrorCode.BAD_TARGET, "swap with another player")
    return t


def verify_top(hand: list[str], card: str, info: CardInfo, top: str | None) -> str | None:
    if top is None:
        return None
    if top != card and top not in discard_set(hand, card, info):
        raise IllegalAction(ErrorCode.BAD_TOP, "top must be one of the cards this Discard All discards")
    return top


def verify_play(s: GameState, seat: int, action: Action) -> Play:
    """Every check of rules.md for a ``play`` by the turn player; raises :class:`IllegalAction`."""
    card = action.card
    info = CARD_INFO.get(card) if isinstance(card, str) else None
    hand = s.hands[seat]
    if info is None or card not in hand:
        raise IllegalAction(ErrorCode.NOT_IN_HAND, "that card is not in your hand")
    if s.stack_last:
        if card not in _STACKABLE[s.rules.stacking, s.stack_last]:
            raise IllegalAction(ErrorCode.STACK_PENDING,
                                f"answer the stack with a draw card of {s.stack_last} or more, or take it")
    else:
        if s.drawn is not None and card != s.drawn:
            raise IllegalAction(ErrorCode.MUST_PLAY_DRAWN, "you may only play the card you drew")
        if card not in s.matching_cards():
            raise IllegalAction(ErrorCode.ILLEGAL_CARD, "that card does not match colour, number or symbol")
    rules = s.rules
    last = len(hand) == 1
    kind = info.kind
    needs: Choice | None = None
    # colour
    roulette_by_target = kind is K_ROULETTE and rules.roulette_chooser is ROULETTE_BY_TARGET
    if info.wild and not roulette_by_target:
        color = _color_letter(action.color)
        if color is None:
            needs = C_COLOR
    elif action.color is not None:
        raise IllegalAction(ErrorCode.BAD_COLOR, "this card takes no colour")
    else:
        color = None
    # 7 target
    target: int | None = None
    if kind is K_NUMBER and info.number == 7 and rules.seven is not SEVEN_OFF:
        if action.target is not None:
            target = verify_target(s, seat, action.target)
        else:
            needs = C_TARGET
    elif action.target is not None:
        raise IllegalAction(ErrorCode.BAD_TARGET, "this card takes no target")
    # Discard All top
    top: str | None = None
    if kind is K_DISCARD_ALL and rules.discard_all_top is TOP_CHOOSE:
        top = verify_top(hand, card, info, action.top)
        extras = len(discard_set(hand, card, info))
        if extras + 1 == len(hand):
            last = True  # the Discard All empties the hand: it wins at once
        elif top is None and extras > 0:
            needs = C_TOP
    elif action.top is not None:
        raise IllegalAction(ErrorCode.BAD_TOP, "this card takes no top")
    if last:
        needs = None  # a last card wins at once: no effect, no choice, no pause
    return new_play((card, info, color, target, top, action.uno, needs))


def play_card(s: GameState, events: list[Event], seat: int, p: Play, now_ms: int) -> None:
    """Pause on a missing choice, or put the card down and apply it."""
    if p.needs is not None:
        s.pending = new_pending((seat, p.needs, p.card, p.uno, -1))
        return
    hand = s.hands[seat] = s.hands[seat][:]
    player = s.players[seat]
    info = p.info
    hand.remove(p.card)
    s.passes = 0
    events.append(new_event((EV_PLAYED, {"player": player, "card": p.card}, None, None)))
    if info.kind is K_DISCARD_ALL:
        extras = [c for c in hand if CARD_INFO[c].color == info.color]
        if extras:
            for c in extras:
                hand.remove(c)
            pile = [p.card, *extras]
            if p.top is not None and p.top != p.card:
                pile.remove(p.top)
                pile.append(p.top)
            else:
                pile = [*extras, p.card]
            s.discard = s.discard + pile
            events.append(new_event((EV_DISCARDED, {"player": player, "cards": extras}, None, None)))
        else:
            s.discard = [*s.discard, p.card]
    else:
        s.discard = [*s.discard, p.card]
    if s.uno[seat] or s.exposed:
        hand_changed(s, seat)
    if not hand:
        end_round(s, events, seat, "out")
        return
    if info.wild:
        if p.color is not None:
            s.color = p.color
            events.append(new_event((EV_COLOR, {"player": player, "color": LETTER_TO_NAME[p.color]},
                                     None, None)))
    else:
        s.color = info.color
    hands_move = _apply_effect(s, events, seat, p, now_ms)
    # the hand as it is now: the effect may have made the player draw (a Wild Reverse Draw 4 on
    # themselves, two players, stacking off), which replaced the list ``hand`` names
    if not hands_move and len(s.hands[seat]) == 1 and not s.eliminated[seat] and s.winner is None:
        _one_card_left(s, events, seat, p.uno, now_ms)


def _one_card_left(s: GameState, events: list[Event], seat: int, called: bool, now_ms: int) -> None:
    player = s.players[seat]
    if called:
        uno = s.uno[:]
        uno[seat] = True
        s.uno = uno
        events.append(new_event((EV_UNO, {"player": player}, None, None)))
    else:
        s.exposed = [*s.exposed, (seat, now_ms + s.rules.catch_window_s * 1000)]
        events.append(new_event((EV_EXPOSED, {"player": player}, None, None)))


def _apply_effect(s: GameState, events: list[Event], seat: int, p: Play, now_ms: int) -> bool:
    """The card's effect and the turn hand-over. True when hands moved (7 swap / 0 pass)."""
    kind = p.info.kind
    rules = s.rules
    if kind is K_NUMBER:
        moved = False
        if p.info.number == 7 and rules.seven is not SEVEN_OFF:
            moved = _swap(s, events, seat, p.target)
        elif p.info.number == 0 and rules.zero is ZERO_PASS:
            _pass_hands(s, events)
            moved = True
        begin_turn(s, s.next_active(seat), now_ms)
        return moved
    if kind is K_SKIP:
        skipped = s.next_active(seat)
        events.append(new_event((EV_SKIPPED, {"players": [s.players[skipped]]}, None, None)))
        begin_turn(s, s.next_active(skipped), now_ms)
    elif kind is K_SKIP_ALL:
        others = [s.players[i] for i in s.active_seats() if i != seat]
        events.append(new_event((EV_SKIPPED, {"players": others}, None, None)))
        begin_turn(s, seat, now_ms)
    elif kind is K_REVERSE:
        s.direction = -s.direction
        events.append(new_event((EV_REVERSED, {"direction": s.direction}, None, None)))
        if s.active_count() == 2:
            other = s.next_active(seat)
            events.append(new_event((EV_SKIPPED, {"players": [s.players[other]]}, None, None)))
            begin_turn(s, seat, now_ms)
        else:
            begin_turn(s, s.next_active(seat), now_ms)
    elif p.info.draw:
        _draw_card_effect(s, events, seat, p, now_ms)
    elif kind is K_ROULETTE:
        target = s.next_active(seat)
        if rules.roulette_chooser is ROULETTE_BY_TARGET:
            begin_turn(s, target, now_ms)
            s.pending = new_pending((target, C_ROULETTE_COLOR, p.card, False, seat))
        else:
            assert p.color is not None
            roulette(s, events, target, p.color, seat, now_ms)
    else:  # Discard All, plain wild
        begin_turn(s, s.next_active(seat), now_ms)
    return False


def _draw_card_effect(s: GameState, events: list[Event], seat: int, p: Play, now_ms: int) -> None:
    value = p.info.draw
    if p.info.kind is K_REVERSE4:
        s.direction = -s.direction
        events.append(new_event((EV_REVERSED, {"direction": s.direction}, None, None)))
        if (s.active_count() == 2
                and s.rules.reverse4_two_players is R4_SELF):
            target = seat
        else:
            target = s.next_active(seat)
    else:
        target = s.next_active(seat)
    if s.rules.stacking is STACKING_OFF:
        penalty_draw(s, events, target, value, now_ms)
        if s.winner is None:
            events.append(new_event((EV_SKIPPED, {"players": [s.players[target]]}, None, None)))
            begin_turn(s, s.next_active(target), now_ms)
        return
    s.stack_total += value
    s.stack_last = value
    begin_turn(s, target, now_ms)


def penalty_draw(s: GameState, events: list[Event], seat: int, count: int, now_ms: int) -> list[str]:
    """``seat`` draws ``count`` (announced as ``drew``), eliminated if the mercy limit is hit."""
    cards, busted = draw_cards(s, events, seat, count)
    player = s.players[seat]
    events.append(new_event((EV_DREW, {"player": player, "count": len(cards)}, player, {"cards": cards})))
    if busted:
        eliminate(s, events, seat, now_ms)
    return cards


def roulette(s: GameState, events: list[Event], target: int, color: str, by: int, now_ms: int) -> None:
    """rules.md "Wild Color Roulette": reveal into the target's hand until a card of ``color``
    (wilds never count); the colour becomes current and the target loses their turn."""
    cards, busted = draw_cards(s, events, target, 1 << 30, until_color=color)
    s.color = color
    events.append(new_event((EV_ROULETTE, {"player": s.players[target], "by": s.players[by],
                                             "color": LETTER_TO_NAME[color], "cards": cards}, None, None)))
    if busted:
        eliminate(s, events, target, now_ms)
        if s.winner is not None:
            return
    begin_turn(s, s.next_active(target), now_ms)


def _swap(s: GameState, events: list[Event], seat: int, target: int | None) -> bool:
    if target is None or target == seat:
        return False
    s.hands[seat], s.hands[target] = s.hands[target], s.hands[seat]
    hand_changed(s, seat)
    hand_changed(s, target)
    events.append(new_event((EV_SWAPPED, {"a": s.players[seat], "b": s.players[target]}, None, None)))
    return True


def _pass_hands(s: GameState, events: list[Event]) -> None:
    """rules.md "0": every active hand moves one seat in the current direction."""
    active = s.active_seats()
    if s.direction < 0:
        active.reverse()
    moved = [s.hands[i] for i in active]
    for k, seat in enumerate(active):
        s.hands[seat] = moved[k - 1]
        hand_changed(s, seat)
    events.append(new_event((EV_PASSED_HANDS, {"direction": s.direction}, None, None)))
