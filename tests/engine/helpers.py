"""Build game states from explicit hands and piles, for scenario tests.

    s = build({"a": ["r-5", "w-draw6"], "b": ["b-2"]}, top="r-3", draw=["g-1", "y-2"])

Seats are in the mapping's order; ``draw`` lists the draw pile bottom-first (its last card is
drawn first); ``discard`` lists cards under ``top``. The colour defaults to the top's colour.
Rules come from ``rules`` (a partial mapping over the ``mercyless`` preset); the turn timer is
off unless asked for, so deadlines do not clutter assertions.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from engine import (
    CARD_INFO,
    Action,
    GameState,
    IllegalAction,
    Pending,
    Rules,
    apply,
    make_rules,
    new_game,
    view_for,
)
from engine.cards import NAME_TO_LETTER
from engine.state import Choice

NOW = 1_000_000


def build(hands: dict[str, list[str]], *, top: str = "r-3", draw: list[str] | None = None,
          discard: list[str] | None = None, set_aside: list[str] | None = None,
          color: str | None = None, turn: str | None = None, direction: int = 1,
          rules: dict[str, Any] | Rules | None = None, eliminated: list[str] = (),
          dealer: str | None = None, stack: tuple[int, int] | None = None,
          scores: dict[str, int] | None = None, exposed: dict[str, int] | None = None,
          uno: list[str] = (), seed: str = "test") -> GameState:
    if isinstance(rules, Rules):
        r = rules
    else:
        opts = {"turn_timer_s": 0}
        opts.update(rules or {})
        r = make_rules(opts)
    players = tuple(hands)
    draw = list(draw if draw is not None else [])
    pile = [*list(discard or []), top]
    # deck composition must account for every card in play: derive it from what was laid out
    all_cards = [c for h in hands.values() for c in h] + draw + pile + list(set_aside or [])
    r = _with_deck(r, all_cards)
    top_info = CARD_INFO[top]
    letter = NAME_TO_LETTER[color] if color else (top_info.color if not top_info.wild else "r")
    idx = {p: i for i, p in enumerate(players)}
    s = GameState(
        rules=r, players=players, seed=seed, rng_counter=0,
        hands=[list(h) for h in hands.values()],
        eliminated=[p in eliminated for p in players], uno=[p in uno for p in players],
        scores=[(scores or {}).get(p, 0) for p in players],
        draw_pile=draw, discard=pile, set_aside=list(set_aside or []), color=letter,
        direction=direction, turn=idx[turn] if turn else 0,
        dealer=idx[dealer] if dealer else len(players) - 1,
    )
    if stack:
        s.stack_total, s.stack_last = stack
    if exposed:
        s.exposed = [(idx[p], until) for p, until in exposed.items()]
    return s


def _with_deck(r: Rules, cards: list[str]) -> Rules:
    from dataclasses import replace

    counts = Counter(cards)
    return replace(r, deck=tuple(sorted(counts.items())))


def pending(s: GameState, player: str, choice: str, card: str, by: str | None = None) -> GameState:
    s.pending = Pending(s.players.index(player), Choice(choice), card,
                        by=s.players.index(by) if by else -1)
    return s


def act(s: GameState, player: str | None, action, now_ms: int = NOW):
    """Apply and return ``(state, events as wire dicts seen by player)``."""
    t = apply(s, player, action, now_ms)
    return t.state, [e.to_wire(player) for e in t.events]


def kinds(events: list[dict]) -> list[str]:
    return [e["kind"] for e in events]


def hand(s: GameState, player: str) -> list[str]:
    return s.hands[s.players.index(player)]


def refuse(s: GameState, player, action, *codes: str, now_ms: int = NOW) -> IllegalAction:
    """``action`` is refused with one of ``codes`` and ``s`` is left exactly as it was."""
    before = s.to_dict()
    twin = s.clone()
    with pytest.raises(IllegalAction) as err:
        apply(s, player, action, now_ms)
    assert err.value.code.value in codes, err.value
    assert s.to_dict() == before
    assert s == twin
    return err.value


def refused(s: GameState, player, action, code, now_ms: int = NOW) -> None:
    """The action raises ``code`` and the state it was tried on is exactly unchanged."""
    refuse(s, player, action, str(code), now_ms=now_ms)


def accepted(s: GameState, player, action) -> bool:
    try:
        apply(s, player, action, NOW)
    except IllegalAction:
        return False
    return True


def event(events: list[dict], kind: str) -> dict:
    found = [e for e in events if e["kind"] == kind]
    assert len(found) == 1, (kind, events)
    return found[0]


def conserved(before: GameState, after: GameState) -> None:
    assert after.card_count() == before.card_count()


class TableMove(NamedTuple):
    """A move of :func:`normal_rounds`, before it is made."""

    state: GameState
    bots: list[Any]
    seat: int
    view: dict[str, Any]
    action: Action
    events: list[Any]  # the events that led to ``state``


def normal_rounds(rules: Rules, tag: str, seeds: range, steps: int = 3000) -> Iterator[TableMove]:
    """Rounds between four ``normal`` bots (seats a-d), each seeing only its own views and its
    own copy of the events: every move, before it is made."""
    from engine.ai.normal import NormalBot

    players = ["a", "b", "c", "d"]
    for seed in seeds:
        state, events = new_game(players, rules, f"{tag}-{seed}")
        bots = [NormalBot(p, rules) for p in players]
        for bot, p in zip(bots, players, strict=True):
            bot.observe([e.to_wire(p) for e in events])
        rng = random.Random(seed)
        for _ in range(steps):
            if state.winner is not None:
                break
            seat = state.pending.player if state.pending is not None else state.turn
            view = view_for(state, players[seat])
            action = bots[seat].decide(view, rng)
            yield TableMove(state, bots, seat, view, action, events)
            state, events = apply(state, players[seat], action, 0)
            for bot, p in zip(bots, players, strict=True):
                bot.observe([e.to_wire(p) for e in events])
