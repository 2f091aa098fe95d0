"""Two checkouts' servers, side by side: ``python -m bench.side_by_side BASE NEW [--pairs 12]``.

This machine's speed drifts by 25% and more within minutes, so two saturated runs made minutes
apart compare the machine, not the code. Here both servers (BASE and NEW are checkouts of this
repository, e.g. ``git worktree add /tmp/base <commit>``) run at once on the real Redis, and
short saturated runs alternate between them (ABBA order); each pair's ratio NEW/BASE of server
CPU-us per action is taken while the machine is about the same, and the median of the pairs
is the figure.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from pathlib import Path

from bench.loadgen import game_run, spawn


async def compare(roots: list[Path], redis: str, pairs: int, rooms: int, seconds: float) -> list[list[float]]:
    """Server CPU-us per action of each root's server, run by run."""
    servers = [spawn(redis, root=root) for root in roots]
    costs: list[list[float]] = [[] for _ in roots]
    try:
        for i in range(pairs):
            order = range(len(roots)) if i % 2 == 0 else reversed(range(len(roots)))
            for k in order:
                proc, url = servers[k]
                run = await game_run(url, proc.pid, rooms, 4, None, seconds)
                costs[k].append(run["cpu_us_per_action"])
            print("  ".join(f"{c[-1]:7.1f}" for c in costs), flush=True)
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait()
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--rooms", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    base, new = asyncio.run(compare([args.base.resolve(), args.new.resolve()], args.redis,
                                    args.pairs, args.rooms, args.seconds))
    ratios = [n / b for b, n in zip(base, new, strict=True)]
    print(f"base {statistics.median(base):.1f}, new {statistics.median(new):.1f} server CPU-us per action "
          f"(medians of {len(base)} runs); new/base per pair: median {statistics.median(ratios):.3f}, "
          f"range {min(ratios):.3f}-{max(ratios):.3f}")


if __name__ == "__main__":
    main()
