"""How much could knowing the others' hands buy the ``hard`` bot? An upper bound for any
inference: ``python -m bench.hard_oracle --preset printed --games 400 --worlds 16``.

The tournament's games (``engine.ai.tournament``, the same seeds), but the ``hard`` seat's search
samples worlds in which every hand is the true one; only the order of the unseen cards (the draw
pile and the cards set aside) is shuffled, so it still cannot see what will be drawn. A bench, not a
bot: it reads the true game state, which no seat may. If even this seat stays short of a target,
better inference of the hidden hands cannot reach it; the search and its rollouts must.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import engine.ai.hard as hard
import engine.ai.tournament as tournament
from engine.state import GameState

_truth: dict[str, GameState] = {}
_view_for = tournament.view_for
_determinize = hard.determinize


def _recording_view_for(state: GameState, player: str, *args: Any) -> Any:
    _truth["state"] = state
    return _view_for(state, player, *args)


_known = {"seats": "all"}


def _next_seat(s: GameState, seat: int) -> int | None:
    """The active seat that plays after ``seat`` (None when ``seat`` is out)."""
    active = [i for i in range(len(s.hands)) if not s.eliminated[i]]
    return active[(active.index(seat) + s.direction) % len(active)] if seat in active else None


def _oracle_world(view: dict[str, Any], me: str, rules: Any, memory: Any, rng: random.Random,
                  *_: Any) -> GameState:
    s = _truth["state"]
    mine = s.players.index(me)
    hands = [list(h) for h in s.hands]
    unseen = [*s.draw_pile, *s.set_aside]
    if _known["seats"] != "all":  # only the next player's hand is the true one: the others' are dealt anew
        nxt = _next_seat(s, mine) if _known["seats"] == "next" else None
        redeal = [i for i in range(len(hands)) if i not in (mine, nxt)]
        for i in redeal:
            unseen.extend(hands[i])
        rng.shuffle(unseen)
        for i in redeal:
            k = len(hands[i])
            hands[i] = unseen[len(unseen) - k:] if k else []
            del unseen[len(unseen) - k:]
    rng.shuffle(unseen)
    n = len(s.draw_pile)
    return replace(s, rules=replace(s.rules, turn_timer_s=0), seed=str(rng.random()), rng_counter=0,
                   hands=hands, eliminated=list(s.eliminated), uno=list(s.uno),
                   scores=list(s.scores), draw_pile=unseen[:n], set_aside=unseen[n:],
                   discard=list(s.discard), exposed=list(s.exposed), reshuffled_at=list(s.reshuffled_at),
                   turn_deadline=None)


def _overlap(world: GameState, truth: GameState, me: str, tally: dict[str, list[float]]) -> None:
    """The share of each other player's true hand that ``world`` gives them (by card), the next
    player's apart."""
    mine = truth.players.index(me)
    nxt = _next_seat(truth, mine)
    for i in range(len(truth.hands)):
        if i != mine and not truth.eliminated[i] and truth.hands[i]:
            shared = sum((Counter(world.hands[i]) & Counter(truth.hands[i])).values())
            tally["next" if i == nxt else "others"].append(shared / len(truth.hands[i]))


@contextlib.contextmanager
def measured_worlds(tally: dict[str, list[float]]) -> Iterator[None]:
    """While inside: the bot's own worlds, each compared with the true hands into ``tally``."""
    def measuring(view: dict[str, Any], me: str, *args: Any) -> GameState:
        world = _determinize(view, me, *args)
        _overlap(world, _truth["state"], me, tally)
        return world

    with _worlds_from(measuring):
        yield


@contextlib.contextmanager
def oracle_worlds(seats: str | None) -> Iterator[None]:
    """While inside: the ``hard`` bot's worlds know ``seats`` ("all", "next" or "none") true hands
    (``None``: its own worlds, nothing changed)."""
    if seats is None:
        yield
        return
    _known["seats"] = seats
    with _worlds_from(_oracle_world):
        yield


@contextlib.contextmanager
def _worlds_from(sampler: Any) -> Iterator[None]:
    """The tournament's true state recorded at each view, and the ``hard`` bot's worlds made by
    ``sampler``, until the block ends."""
    tournament.view_for = _recording_view_for
    hard.determinize = sampler
    try:
        yield
    finally:
        tournament.view_for = _view_for
        hard.determinize = _determinize
        _truth.clear()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.hard_oracle", description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="printed")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worlds", type=int, default=16)
    parser.add_argument("--truth", choices=("oracle", "next", "none", "sampled"), default="oracle",
                        help="oracle: every hand the true one; next: only the next player's (the others "
                        "dealt at random); none: every other hand dealt at random (no inference at all); "
                        "sampled: the bot's own worlds (the tournament's line, for a side-by-side)")
    parser.add_argument("--overlap", action="store_true",
                        help="the bot's own worlds, each compared with the true hands: the share of "
                        "a true hand a sampled one holds, the next player's and the others'")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a HardBot option, as the tournament's --set")
    args = parser.parse_args(argv)
    options: dict[str, Any] = {"max_worlds": args.worlds, "budget_ms": 1e9}
    options.update({k: tournament._literal(v) for k, v in (kv.split("=", 1) for kv in args.set)})
    t0 = time.perf_counter()
    tally: dict[str, list[float]] = {"next": [], "others": []}
    seats = None if args.truth == "sampled" else {"oracle": "all"}.get(args.truth, args.truth)
    with measured_worlds(tally) if args.overlap else oracle_worlds(seats):
        r = tournament.run("hard", "normal", args.games, args.preset, args.seed, options)
    low, high = r["ci"]
    worlds = "sampled" if args.overlap else args.truth
    print(f"hard ({worlds} worlds{''.join(' ' + kv for kv in args.set)}) vs 3 normal, {args.preset}, "
          f"{args.games} games, seed {args.seed}: {r['rate']:.1%} [{low:.1%}, {high:.1%}] "
          f"({time.perf_counter() - t0:.0f} s)", flush=True)
    if args.overlap:
        print("  share of a true hand in a sampled one: " + ", ".join(
            f"{key} {sum(v) / max(len(v), 1):.3f} ({len(v)} hands)" for key, v in tally.items()), flush=True)


if __name__ == "__main__":
    main()
