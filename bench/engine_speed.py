"""Engine speed benchmark: ``python -m bench.engine_speed [--games N] [--rounds R]``.

Plays N random 4-player games (uniform over ``legal_actions`` of whoever must act) and prints
games/s, actions/s, actions per game and apply() median/p99 in microseconds. In the same run,
when rlcard is installed (the ``bench`` extra), it plays random games of rlcard's classic UNO
(``rlcard.games.uno.game.UnoGame``, random legal actions) and prints the ratio of actions per
second. Modes:

- ``apply``: ``legal_actions`` + ``apply`` (a new state per action, the server's way);
- ``in_place``: the same with ``apply(..., in_place=True)`` (how bots and simulations run);
- ``apply+view``: ``apply`` plus ``view_for`` of the next player to act (what rlcard's ``step``
  also does: it builds the next player's state).

This machine's speed wanders by tens of percent from one second to the next, so the modes and
rlcard take turns a few games at a time (``--chunk``) and each ratio compares the same moments;
the median over ``--rounds`` is reported.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from engine.game import apply, new_game
from engine.legal import legal_actions
from engine.rules import make_rules
from engine.view import view_for

PLAYERS = ("p0", "p1", "p2", "p3")


def _actor(s) -> str:
    return s.players[s.pending.player if s.pending is not None else s.turn]


class EngineRun:
    """Random games of one mode, played a few at a time (see :func:`interleaved`)."""

    def __init__(self, mode: str, seed: int) -> None:
        self.mode = mode
        self.seed = seed
        self.rules = make_rules({"turn_timer_s": 0})
        self.choice = random.Random(seed).choice
        self.games = 0

    def play(self, games: int) -> tuple[float, int]:
        """Seconds spent and actions taken playing the next ``games`` games."""
        choice, rules = self.choice, self.rules
        in_place = self.mode == "in_place"
        with_view = self.mode == "apply+view"
        actions = 0
        start = time.perf_counter()
        for g in range(self.games, self.games + games):
            s = new_game(PLAYERS, rules, f"bench-{self.seed}-{g}").state
            while s.winner is None:
                actor = _actor(s)
                s = apply(s, actor, choice(legal_actions(s, actor)), 0, in_place=in_place).state
                actions += 1
                if with_view and s.winner is None:
                    view_for(s, _actor(s))
        self.games += games
        return time.perf_counter() - start, actions


class RlcardRun:
    """Random 4-player games of rlcard's UNO (random legal actions), a few at a time."""

    def __init__(self, seed: int) -> None:
        import numpy as np
        from rlcard.games.uno.game import UnoGame

        self.game = UnoGame(num_players=4)
        self.game.np_random = np.random.RandomState(seed)
        self.choice = random.Random(seed).choice

    def play(self, games: int) -> tuple[float, int]:
        game, choice = self.game, self.choice
        actions = 0
        start = time.perf_counter()
        for _ in range(games):
            state, _ = game.init_game()
            while not game.is_over():
                state, _ = game.step(choice(state["legal_actions"]))
                actions += 1
        return time.perf_counter() - start, actions


def have_rlcard() -> bool:
    try:
        import numpy  # noqa: F401
        import rlcard.games.uno.game  # noqa: F401
    except ImportError:
        return False
    return True


def interleaved(runs: dict[str, EngineRun | RlcardRun], games: int, chunk: int
                ) -> dict[str, tuple[float, int]]:
    """Play ``games`` games of every run, ``chunk`` games of each in turn (the order rotating),
    and total the seconds and actions: every mode meets the same moments of a machine whose
    speed wanders by tens of percent from one second to the next."""
    totals = {name: (0.0, 0) for name in runs}
    names = list(runs)
    for k, done in enumerate(range(0, games, chunk)):
        n = min(chunk, games - done)
        for name in names[k % len(names):] + names[:k % len(names)]:
            t, a = runs[name].play(n)
            totals[name] = (totals[name][0] + t, totals[name][1] + a)
    return totals


def apply_latency_us(games: int, seed: int) -> list[float]:
    """Per-call apply() times in microseconds over ``games`` random games."""
    rules = make_rules({"turn_timer_s": 0})
    rng = random.Random(seed)
    out: list[float] = []
    clock = time.perf_counter_ns
    for g in range(games):
        s = new_game(PLAYERS, rules, f"lat-{seed}-{g}").state
        while s.winner is None:
            actor = _actor(s)
            action = rng.choice(legal_actions(s, actor))
            t0 = clock()
            s = apply(s, actor, action, 0).state
            out.append((clock() - t0) / 1000)
    return out


def _median_rate(runs: list[tuple[float, int]]) -> tuple[float, float, float]:
    """Median games/s, actions/s and mean actions/game over runs of equal game counts."""
    return (statistics.median(1 / t for t, _ in runs),
            statistics.median(a / t for t, a in runs),
            statistics.mean(a for _, a in runs))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games per round and mode")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=5, help="games of one mode before the next")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    modes = ("apply", "in_place", "apply+view")
    rlcard = have_rlcard()
    results: dict[str, list[tuple[float, int]]] = {m: [] for m in (*modes, "rlcard")}
    for r in range(args.rounds):
        runs: dict[str, EngineRun | RlcardRun] = {m: EngineRun(m, args.seed + r) for m in modes}
        if rlcard:
            runs["rlcard"] = RlcardRun(args.seed + r)
        for name, total in interleaved(runs, args.games, args.chunk).items():
            results[name].append(total)

    print(f"bench.engine_speed: {args.games} games x {args.rounds} rounds, 4 players, mercyless preset, "
          f"modes interleaved {args.chunk} games at a time")
    rates: dict[str, float] = {}
    for mode, runs_of_mode in results.items():
        if not runs_of_mode:
            continue
        per_game = [(t / args.games, a / args.games) for t, a in runs_of_mode]
        gps, aps, apg = _median_rate(per_game)
        rates[mode] = aps
        label = "rlcard UNO (classic)" if mode == "rlcard" else f"mercyless [{mode}]"
        print(f"{label:<28} {gps:9.0f} games/s {aps:10.0f} actions/s {apg:7.1f} actions/game")
    lat = sorted(apply_latency_us(max(50, args.games // 10), args.seed))
    p50 = lat[len(lat) // 2]
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    print(f"apply() latency: median {p50:.1f} us, p99 {p99:.1f} us over {len(lat)} calls")
    if "rlcard" in rates:
        for mode in modes:
            print(f"ratio mercyless [{mode}] / rlcard actions/s: {rates[mode] / rates['rlcard']:.2f}")
    else:
        print("rlcard not installed (pip install -e '.[bench]'): no ratio")


def _cli(fn: Callable[[], None] = main) -> None:  # pragma: no cover
    fn()


if __name__ == "__main__":  # pragma: no cover
    main()
