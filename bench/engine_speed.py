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

Rounds are interleaved and medians reported, as this machine's speed wanders between runs.
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


def play_games(games: int, seed: int, mode: str = "apply") -> tuple[float, int]:
    """Seconds spent and actions taken playing ``games`` random games."""
    rules = make_rules({"turn_timer_s": 0})
    rng = random.Random(seed)
    choice = rng.choice
    in_place = mode == "in_place"
    with_view = mode == "apply+view"
    actions = 0
    start = time.perf_counter()
    for g in range(games):
        s = new_game(PLAYERS, rules, f"bench-{seed}-{g}").state
        while s.winner is None:
            actor = _actor(s)
            s = apply(s, actor, choice(legal_actions(s, actor)), 0, in_place=in_place).state
            actions += 1
            if with_view and s.winner is None:
                view_for(s, _actor(s))
    return time.perf_counter() - start, actions


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


def rlcard_games(games: int, seed: int) -> tuple[float, int] | None:
    """Seconds and actions for ``games`` random 4-player games of rlcard's UNO, or None."""
    try:
        import numpy as np
        from rlcard.games.uno.game import UnoGame
    except ImportError:
        return None
    game = UnoGame(num_players=4)
    game.np_random = np.random.RandomState(seed)
    rng = random.Random(seed)
    actions = 0
    start = time.perf_counter()
    for _ in range(games):
        state, _ = game.init_game()
        while not game.is_over():
            state, _ = game.step(rng.choice(state["legal_actions"]))
            actions += 1
    return time.perf_counter() - start, actions


def _median_rate(runs: list[tuple[float, int]]) -> tuple[float, float, float]:
    """Median games/s, actions/s and mean actions/game over runs of equal game counts."""
    return (statistics.median(1 / t for t, _ in runs),
            statistics.median(a / t for t, a in runs),
            statistics.mean(a for _, a in runs))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games per round and mode")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    modes = ("apply", "in_place", "apply+view")
    results: dict[str, list[tuple[float, int]]] = {m: [] for m in (*modes, "rlcard")}
    have_rlcard = True
    for r in range(args.rounds):
        for mode in modes:
            results[mode].append(play_games(args.games, args.seed + r, mode))
        rl = rlcard_games(args.games, args.seed + r) if have_rlcard else None
        if rl is None:
            have_rlcard = False
        else:
            results["rlcard"].append(rl)

    print(f"bench.engine_speed: {args.games} games x {args.rounds} rounds, 4 players, mercyless preset")
    rates: dict[str, float] = {}
    for mode, runs in results.items():
        if not runs:
            continue
        runs = [(t / args.games, a / args.games) for t, a in runs]  # per game
        gps, aps, apg = _median_rate(runs)
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
