"""Sample full game states consistent with what one seat knows.

The seat knows its own hand, every count in its view, the discard pile since the last rebuild
(its memory), and some cards in other hands (roulette reveals, hands it gave away). Everything
else is dealt at random from the cards unaccounted for, a hand's unknown cards kept out of what
the seat's memory believes it lacks (a colour it drew on, a Discard All's colour, a stack it
could not answer), each belief binding the cards held when it was formed. The sample is a world
the bot may search; the real state is never looked at.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from typing import Any

from ..cards import CARD_INFO, NAME_TO_LETTER, build_deck
from ..rules import Rules
from ..state import Choice, GameState, Pending
from .memory import Memory
from .model import consistent


def determinize(view: dict[str, Any], me: str, rules: Rules, memory: Memory,
                rng: random.Random, voids: bool = True, lacks: bool = True,
                model_tries: int = 0) -> GameState:
    """A world the seat cannot tell from the real one. ``model_tries`` > 0: a player's sampled
    hand is dealt again (up to that many times in all) while their plays since they last got a
    card would not have been the ``normal`` heuristic's choices from it (:mod:`engine.ai.model`)."""
    game = view["game"]
    players = [p["id"] for p in view["players"]]
    counts = {p["id"]: p["cards"] for p in view["players"]}
    my_hand = list(view["hand"])
    pool = Counter(build_deck(rules.deck))
    pool.subtract(my_hand)
    # the discard pile: what memory says, made to fit the count the view shows
    discard = [c for c in memory.discard[:-1] if pool[c] > 0 and _take(pool, c)]
    top = game["top"]
    if pool[top] > 0:
        pool[top] -= 1
    discard = discard[-(game["discard_pile"] - 1):] if game["discard_pile"] > 1 else []
    # cards known in other hands
    hands: dict[str, list[str]] = {me: my_hand}
    known_len: dict[str, int] = {}
    for pid in players:
        if pid == me:
            continue
        known = [c for c in memory.known.get(pid, Counter()).elements() if pool[c] > 0]
        keep = []
        for c in known[: counts[pid]]:
            pool[c] -= 1
            keep.append(c)
        hands[pid] = keep
        known_len[pid] = len(keep)
    rest = list(pool.elements())
    # cards memory placed in the discard but the pool could not spare were already dropped;
    # fill the discard up to its count from the unknown cards
    rng.shuffle(rest)
    while len(discard) < game["discard_pile"] - 1 and rest:
        discard.append(rest.pop())

    def constrain(pid: str) -> None:
        """Cards believed absent from a hand: its older cards avoid them."""
        unknown = counts[pid] - len(hands[pid])
        # each belief (colours or cards absent, and how many cards came since it was formed,
        # which are free of it), those that bind the most cards first
        beliefs = [(min(free, unknown), colors, cards)
                   for free, colors, cards in _beliefs(memory, pid, lacks)]
        if not beliefs:
            return
        beliefs.sort(key=lambda b: b[0])
        # the cards got since a belief was formed are free of it: the oldest cards are under
        # every belief, the next ones under all but the oldest belief, and so on
        colors: frozenset[str] = frozenset().union(*(b[1] for b in beliefs))
        cards: frozenset[str] = frozenset().union(*(b[2] for b in beliefs))
        bound = unknown
        while beliefs:
            free, _, _ = beliefs[-1]
            if bound - free > 0:
                _pick(hands[pid], rest, bound - free, colors, cards)
            bound = free
            beliefs.pop()
            colors = frozenset().union(*(b[1] for b in beliefs))
            cards = frozenset().union(*(b[2] for b in beliefs))

    def fill(pid: str) -> None:
        need = counts[pid] - len(hands[pid])
        hands[pid].extend(rest[len(rest) - need:] if need > 0 else [])
        if need > 0:
            del rest[len(rest) - need:]

    for pid in players:
        if pid != me and voids:
            constrain(pid)
    for pid in players:
        if pid != me:
            fill(pid)
    if model_tries > 1:
        for pid in players:
            shown = memory.shown.get(pid)
            if pid == me or not shown or pid not in known_len:
                continue
            for _ in range(model_tries - 1):
                if consistent(hands[pid], shown, rules):
                    break
                k = known_len[pid]
                rest.extend(hands[pid][k:])  # deal this hand's unknown cards again
                del hands[pid][k:]
                rng.shuffle(rest)
                if voids:
                    constrain(pid)
                fill(pid)
    set_aside = [rest.pop() for _ in range(min(game["set_aside"], len(rest)))]
    draw_pile = rest
    pending = None
    if game["pending"] is not None and game["pending"]["player"] == me:
        p = game["pending"]
        pending = Pending(players.index(me), Choice(p["choice"]), p.get("card") or top)
    stack = game["stack"]
    s = GameState(
        rules=replace(rules, turn_timer_s=0), players=tuple(players), seed=str(rng.random()),
        rng_counter=0, hands=[hands[p] for p in players],
        eliminated=[p["eliminated"] for p in view["players"]],
        uno=[p["uno"] for p in view["players"]], scores=[p["score"] for p in view["players"]],
        draw_pile=draw_pile, discard=[*discard, top], set_aside=set_aside,
        color=NAME_TO_LETTER[game["color"]], direction=game["direction"],
        turn=players.index(game["turn"]), dealer=players.index(game["dealer"]),
        stack_total=stack["total"] if stack else 0, stack_last=stack["last"] if stack else 0,
        pending=pending, drew=game.get("drawn") is not None, drawn=game.get("drawn"),
        exposed=[(players.index(e["player"]), e["until"]) for e in game["exposed"]])
    return s


def _beliefs(memory: Memory, pid: str, lacks: bool) -> list[tuple[int, frozenset[str], frozenset[str]]]:
    """What ``memory`` believes ``pid``'s hand lacks: (cards free of it, colours, cards)."""
    out = []
    if pid in memory.void:
        out.append((memory.free.get(pid, 0), memory.void[pid], frozenset()))
    out.extend((free, colors, frozenset()) for colors, free in memory.older.get(pid, ()))
    if lacks and pid in memory.lacks:
        out.append((memory.lacks_free.get(pid, 0), frozenset(), memory.lacks[pid]))
    return out


def _pick(hand: list[str], rest: list[str], want: int, colors: frozenset[str],
          cards: frozenset[str]) -> None:
    """Move up to ``want`` cards of none of ``colors`` and not in ``cards`` from the end of
    ``rest`` (shuffled) into ``hand``."""
    picked = [i for i in range(len(rest) - 1, -1, -1)
              if CARD_INFO[rest[i]].color not in colors and rest[i] not in cards][:want]
    for i in picked:  # descending indices: each pop leaves the others in place
        hand.append(rest.pop(i))


def _take(pool: Counter[str], card: str) -> bool:
    pool[card] -= 1
    return True
