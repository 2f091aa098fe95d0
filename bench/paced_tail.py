"""Paced runs, settings side by side: ``python -m bench.paced_tail [--runs 4] [SETTINGS ...]``.

Each SETTINGS argument (``NAME=value,NAME=value``, or ``-`` for the defaults) starts one server
process on the real Redis; paced runs (250 rooms x 4 clients at 1 action/s, as the load
benchmark's) alternate between them, so each setting's p99 is read while the machine is about
the same. Example, the collector's pacing against CPython's own:
``python -m bench.paced_tail --runs 4 - GC_PACED=false``.
"""

from __future__ import annotations

import argparse
import statistics

from bench.loadgen import game_run, run_fast, settings_env, spawn


async def main_async(args: argparse.Namespace) -> None:
    envs = [settings_env(spec) for spec in args.settings]
    servers: list = []
    p99s: list[list[float]] = [[] for _ in envs]
    try:
        for env in envs:  # (inside the try: a server that fails to start stops those before it)
            servers.append(spawn(args.redis, env=env))
        for _ in range(args.runs):
            for spec, (proc, url), seen in zip(args.settings, servers, p99s, strict=True):
                run = await game_run(url, proc.pid, args.rooms, 4, 1.0, args.duration)
                seen.append(run["p99"])
                print(f"{spec:>24}: {run['actions_per_s']:.0f} actions/s, p50 {run['p50']:.1f} ms, "
                      f"p99 {run['p99']:.1f} ms, {run['cpu_us_per_action']:.0f} server CPU-us/action, "
                      f"errors {run['errors']}", flush=True)
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait(10)
    for spec, seen in zip(args.settings, p99s, strict=True):
        print(f"{spec:>24}: p99 median {statistics.median(seen):.1f} ms over {len(seen)} runs "
              f"({', '.join(f'{p:.1f}' for p in seen)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--rooms", type=int, default=250)
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("settings", nargs="*", default=["-"])
    run_fast(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
