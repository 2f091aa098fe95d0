"""Bot tournament: ``python -m engine.ai.tournament --level normal --vs easy --games 2000``.

Plays seeded 4-player games: one seat of ``--level`` against three of ``--vs`` (the tested seat
moves round the table game by game), under each preset asked for. Every bot sees only its own
view and its own copy of the events. Prints the tested seat's win rate with a 95% Wilson
interval (a random seat wins 25%) and the decision time p50/p99 per level (wall clock, and the
tested level's CPU time, which a busy machine does not stretch). The ``hard`` bot
searches as the server's seats do (``--budget-ms`` of CPU time a decision, which other processes
do not take, up to 64 worlds; ``--set clock=wall`` bounds it by the wall clock instead, which a
busy machine stretches); with ``--worlds N`` it samples exactly N worlds instead, and the win rate
is the same on any machine.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ..actions import EXPIRE as _EXPIRE
from ..actions import ActionKind
from ..game import apply, new_game, next_deadline
from ..rules import make_rules
from ..view import view_for
from . import make_bot
from .hard import SEARCH_BUDGET_MS


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return centre - half, centre + half


def play_game(levels: list[str], preset: str, seed: int, times: dict[str, list[float]],
              bot_options: dict[str, Any]) -> int:
    """Play one game; returns the winning seat."""
    rules = make_rules({"preset": preset, "turn_timer_s": 0})
    players = [f"s{i}" for i in range(len(levels))]
    rng = random.Random(seed)
    bots = [make_bot(level, pid, rules, **(bot_options if level == "hard" else {}))
            for level, pid in zip(levels, players, strict=True)]
    state, events = new_game(players, rules, f"t{seed}")
    now = 0
    for bot, pid in zip(bots, players, strict=True):
        bot.observe([e.to_wire(pid) for e in events])
    for _ in range(5000):
        if state.winner is not None:
            return state.winner
        now += 1000
        due = next_deadline(state)
        if due is not None and due[0] is ActionKind.EXPIRE and due[1] <= now:
            state, events = apply(state, None, _EXPIRE, now)
        else:
            seat = state.pending.player if state.pending is not None else state.turn
            order = [seat] + [i for i in range(len(players)) if i != seat]
            action = None
            for i in order:  # the actor, else anyone with an out-of-turn call
                view = view_for(state, players[i], None, now)
                t0, c0 = time.perf_counter(), time.process_time()
                action = bots[i].decide(view, rng)
                if i == seat:
                    times[levels[i]].append((time.perf_counter() - t0) * 1000)
                    times.setdefault(f"cpu {levels[i]}", []).append((time.process_time() - c0) * 1000)
                if action is not None and (i == seat or action.kind in (ActionKind.CATCH, ActionKind.UNO)):
                    actor = players[i]
                    break
                action = None
            assert action is not None
            state, events = apply(state, actor, action, now)
        for bot, pid in zip(bots, players, strict=True):
            bot.observe([e.to_wire(pid) for e in events])
    raise RuntimeError("game did not end")


def _play_range(level: str, vs: str, first: int, stop: int, preset: str, seed: int,
                bot_options: dict[str, Any]) -> tuple[list[int], dict[str, list[float]]]:
    """Games ``first``..``stop - 1``: the tested seat's result in each (1 a win) and every
    decision time."""
    times: dict[str, list[float]] = {level: [], vs: []}
    won = []
    for g in range(first, stop):
        seat = g % 4
        levels = [vs] * 4
        levels[seat] = level
        won.append(int(play_game(levels, preset, seed + g, times, bot_options) == seat))
    return won, times


def run(level: str, vs: str, games: int, preset: str, seed: int,
        bot_options: dict[str, Any], jobs: int = 1) -> dict[str, Any]:
    """Play ``games`` games, in ``jobs`` processes (one core each; the same seeds either way)."""
    bounds = [games * j // jobs for j in range(jobs + 1)]
    parts = [(level, vs, bounds[j], bounds[j + 1], preset, seed, bot_options) for j in range(jobs)]
    if jobs == 1:
        results = [_play_range(*parts[0])]
    else:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_play_range, *zip(*parts, strict=True)))
    won = [w for part, _ in results for w in part]
    wins = sum(won)
    times: dict[str, list[float]] = {level: [], vs: []}
    for _, part in results:
        for key, values in part.items():
            times.setdefault(key, []).extend(values)
    low, high = wilson(wins, games)
    return {"level": level, "vs": vs, "preset": preset, "games": games, "wins": wins,
            "rate": wins / games, "ci": (low, high), "times": times, "won": won}


def controlled(won: list[int], control: list[int], mean: float = 0.25) -> dict[str, float]:
    """The tested seat's win rate corrected by a control: the same deals with the ``--vs``
    level in the seat (whose expected rate is ``mean``, a quarter: four equal seats). Deals that
    favour the seat favour it whoever sits there, so ``rate - beta * (control rate - mean)``
    has the variance of the rate times 1 - rho^2 (rho: the games' correlation)."""
    n = len(won)
    a = sum(won) / n
    c = sum(control) / n
    cov = sum((x - a) * (y - c) for x, y in zip(won, control, strict=True)) / (n - 1)
    var_a = sum((x - a) ** 2 for x in won) / (n - 1)
    var_c = sum((y - c) ** 2 for y in control) / (n - 1)
    beta = cov / var_c if var_c else 0.0
    rho = cov / math.sqrt(var_a * var_c) if var_a and var_c else 0.0
    adjusted = a - beta * (c - mean)
    se = math.sqrt(var_a * (1 - rho * rho) / n)
    return {"rate": adjusted, "low": adjusted - 1.96 * se, "high": adjusted + 1.96 * se,
            "rho": rho, "control": c, "raw_se": math.sqrt(var_a / n), "se": se}


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def _literal(text: str) -> Any:
    """``--set`` values: numbers and booleans as such, anything else as a string."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Mercyless bot tournament")
    parser.add_argument("--level", default="normal")
    parser.add_argument("--vs", default="easy")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--presets", default="mercyless,printed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget-ms", type=float, default=SEARCH_BUDGET_MS,
                        help="hard bot's CPU time per decision (the server's, HARD_BOT_BUDGET_MS)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes to play in (one core each: the hard bot's search is timed)")
    parser.add_argument("--worlds", type=int, default=None,
                        help="hard bot: sample exactly this many worlds a decision, however long "
                             "it takes (its strength then does not depend on the machine's load)")
    parser.add_argument("--policy", default=None, help="hard bot's rollout policy (guided, random)")
    parser.add_argument("--control", action="store_true",
                        help="also play the same games with --vs in the tested seat, and print the "
                             "win rate corrected by that control (a measurement aid: less noise)")
    parser.add_argument("--outcomes", default=None,
                        help="write each game's result for the tested seat (1 a win) to this file, "
                             "one line per preset")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="another hard bot option (engine.ai.hard.HardBot), e.g. leaf=fitted")
    args = parser.parse_args(argv)
    options: dict[str, Any] = {"budget_ms": args.budget_ms}
    if args.worlds is not None:
        options.update(max_worlds=args.worlds, budget_ms=1e9)
    if args.policy is not None:
        options["policy"] = args.policy
    for item in args.set:
        key, _, value = item.partition("=")
        options[key] = _literal(value)
    print(f"{'tested':<8} {'vs 3x':<8} {'preset':<10} {'games':>6} {'win rate':>9} {'95% CI':>17}"
          f" {'p50 ms':>8} {'p99 ms':>8}")
    for preset in args.presets.split(","):
        start = time.perf_counter()
        r = run(args.level, args.vs, args.games, preset, args.seed, options, args.jobs)
        t = r["times"][args.level]
        cpu = r["times"].get(f"cpu {args.level}", [])
        low, high = r["ci"]
        print(f"{args.level:<8} {args.vs:<8} {preset:<10} {r['games']:>6} {r['rate']:>9.1%}"
              f" {f'[{low:.1%}, {high:.1%}]':>17} {_pct(t, 0.5):>8.2f} {_pct(t, 0.99):>8.2f}"
              f"   ({time.perf_counter() - start:.0f} s; {args.vs} p50/p99"
              f" {_pct(r['times'][args.vs], 0.5):.2f}/{_pct(r['times'][args.vs], 0.99):.2f} ms;"
              f" {args.level} CPU p50/p99 {_pct(cpu, 0.5):.2f}/{_pct(cpu, 0.99):.2f} ms)")
        control = None
        if args.control:
            control = run(args.vs, args.vs, args.games, preset, args.seed, {}, args.jobs)["won"]
            k = controlled(r["won"], control)
            ci = f"[{k['low']:.1%}, {k['high']:.1%}]"
            print(f"{'':<8} {'control':<8} {preset:<10} {r['games']:>6} {k['rate']:>9.1%} {ci:>17}"
                  f"   (rho {k['rho']:.3f}; {args.vs} in the seat {k['control']:.1%};"
                  f" SE {k['raw_se']:.2%} -> {k['se']:.2%})")
        if args.outcomes:
            with open(args.outcomes, "a") as f:
                f.write(f"{preset} {args.level} {''.join(map(str, r['won']))}"
                        f"{' control ' + ''.join(map(str, control)) if control else ''}\n")


if __name__ == "__main__":  # pragma: no cover
    main()
