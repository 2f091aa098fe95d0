"""What a system call costs here, measured directly: ``python -m bench.syscalls``.

Why: a sampling profiler that pauses the process for each sample (py-spy's default) lands on
system calls more often than their share of the time, since a call it interrupts takes longer.
On these machines py-spy ``--native`` put 7.5% of the server's event-loop samples in
``getpid()`` (CPython's fork check inside ``asyncio.get_running_loop``) and ~16% in socket
``write()``; timed on their own they are a small fraction of that. This prints the CPU time of
``os.getpid``, ``asyncio.get_running_loop`` and one ``send`` on a loopback TCP socket by size
(the reader is another process, so its side is not counted).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import socket


def cpu_us() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1e6


def per_call(fn, n: int) -> float:
    start = cpu_us()
    for _ in range(n):
        fn()
    return (cpu_us() - start) / n


def loopback_sends(sizes: list[int], n: int) -> dict[int, float]:
    listener = socket.create_server(("127.0.0.1", 0))
    pid = os.fork()
    if pid == 0:  # the reader: reads until the writer closes
        conn, _ = listener.accept()
        while conn.recv(1 << 20):
            pass
        os._exit(0)
    sender = socket.create_connection(listener.getsockname())
    sender.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    costs = {}
    try:
        for size in sizes:
            data = b"x" * size
            count = max(n * 500 // max(size, 500), 200)
            costs[size] = per_call(lambda data=data: sender.sendall(data), count)
    finally:
        sender.close()
        os.waitpid(pid, 0)
    return costs


async def _running_loop_cost(n: int) -> float:
    return per_call(asyncio.get_running_loop, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args()
    print(f"os.getpid(): {per_call(os.getpid, args.calls):.3f} us CPU per call")
    print(f"asyncio.get_running_loop(): {asyncio.run(_running_loop_cost(args.calls)):.3f} us CPU per call")
    for size, cost in loopback_sends([500, 5_000, 50_000], args.calls // 10).items():
        print(f"loopback TCP send of {size} B: {cost:.2f} us CPU per send")


if __name__ == "__main__":
    main()
