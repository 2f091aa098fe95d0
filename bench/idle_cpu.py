"""Idle CPU of server processes: ``python -m bench.idle_cpu [--seconds 40] [SETTINGS ...]``.

Each SETTINGS argument (``NAME=value,NAME=value``, or ``-`` for the defaults) starts one server
process on the real Redis; they run side by side, idle, for the same ``--seconds``, and each
prints the CPU time it used (read from /proc). Every process added behind a load balancer pays
this whatever its share of the players. Example, a setting against the default:
``python -m bench.idle_cpu - SCHEDULER_POLL_MS=250``.
"""

from __future__ import annotations

import argparse
import time

from bench.loadgen import cpu_seconds, settings_env, spawn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("settings", nargs="*", default=["-", "-"])
    args = parser.parse_args()
    procs = []
    try:
        for spec in args.settings:
            procs.append((spec, spawn(args.redis, env=settings_env(spec))[0]))
        time.sleep(3)  # past start-up (imports, the first connections)
        start = [cpu_seconds(p.pid) for _, p in procs]
        time.sleep(args.seconds)
        for (spec, proc), before in zip(procs, start, strict=True):
            used = (cpu_seconds(proc.pid) - before) * 1000
            print(f"{'defaults' if spec == '-' else spec:40s} {used:5.0f} ms of CPU over "
                  f"{args.seconds:.0f} s idle ({used / args.seconds:.1f} ms/s)")
    finally:
        for _, proc in procs:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
