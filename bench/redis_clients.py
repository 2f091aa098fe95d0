"""The hand-written Redis pieces beside redis-py, in one run: ``python -m bench.redis_clients``.

Each pair does the same work on the same Redis and is measured in this process's CPU time
(Redis's own CPU is another process's and is left out), in alternating rounds so a busy
machine weighs on both alike; the medians are printed side by side.

- **commits**: a batch of commits the way app/storage/batch.py groups them (each an EVALSHA
  of a script that writes a ~4 KB room document and publishes it, as the store's commit
  does), over rawredis's plain RESP against redis-py's pipeline.
- **relay publishes**: frames of a relayed socket (~200 bytes), published without waiting, by
  app/storage/publisher.py against redis-py's ``publish`` on a pipeline flushed per batch.
- **commit messages heard**: another process's commits (~4 KB each) arriving on a channel, by
  app/storage/subscriber.py against redis-py's ``PubSub`` read loop. The messages are published
  by a child process, so that only the listening is counted here.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

from app.storage.batch import GroupCommit
from app.storage.publisher import Publisher
from app.storage.rawredis import RawConnection
from app.storage.subscriber import Subscriber

SCRIPT = "redis.call('SET', KEYS[1], ARGV[1]); redis.call('PUBLISH', KEYS[2], ARGV[1]); return 1"
DOC = b"x" * 4096
FRAME = b"f" * 200


async def _cpu_us_per(n: int, work: Callable[[], Awaitable[None]]) -> float:
    start = time.process_time()
    await work()
    return (time.process_time() - start) / n * 1e6


async def commits(url: str, batches: int, per_batch: int) -> dict[str, float]:
    client = aioredis.Redis.from_url(url)
    sha = await client.script_load(SCRIPT)
    out: dict[str, float] = {}
    for name, raw in (("rawredis", RawConnection(url)), ("redis-py", None)):
        group = GroupCommit(client, max_batch=per_batch, raw=raw)

        async def work(group: GroupCommit = group) -> None:
            for _ in range(batches):
                results = await asyncio.gather(*(group.execute(("EVALSHA", sha, 2, f"bench:room:{i}",
                                                                "bench:chan", DOC))
                                                  for i in range(per_batch)))
                assert all(r == [1] for r in results), results[:1]

        await work()  # warm: connections open, script cached
        out[name] = await _cpu_us_per(batches, work)
        if raw is not None:
            raw.close()
    await client.delete(*(f"bench:room:{i}" for i in range(per_batch)))
    await client.aclose()
    return out


async def publishes(url: str, frames: int, per_flush: int) -> dict[str, float]:
    out: dict[str, float] = {}
    pub = Publisher(url)
    assert await pub.until_ready()

    async def hand_written() -> None:
        for i in range(frames // per_flush):
            for _ in range(per_flush):
                pub.publish(b"bench:relay", FRAME, None, reply=False)
            if i % 8 == 7:  # let the writes out, as the loop would between callbacks
                await pub.published(b"bench:relay", FRAME)

    await hand_written()
    out["publisher.py"] = await _cpu_us_per(frames, hand_written)
    pub.close()
    client = aioredis.Redis.from_url(url)

    async def library() -> None:
        for _ in range(frames // per_flush):
            async with client.pipeline(transaction=False) as pipe:
                for _ in range(per_flush):
                    pipe.publish("bench:relay", FRAME)
                await pipe.execute()

    await library()
    out["redis-py"] = await _cpu_us_per(frames, library)
    await client.aclose()
    return out


def _flood(url: str, channel: str, n: int) -> subprocess.Popen[bytes]:
    """A child process that publishes ``n`` commit-sized messages on ``channel``, then one
    ``end``."""
    code = ("import redis,sys; r=redis.Redis.from_url(sys.argv[1]); p=r.pipeline(transaction=False)\n"
            "for i in range(int(sys.argv[3])):\n"
            "    p.publish(sys.argv[2], b'x'*4096)\n"
            "    if i % 200 == 199: p.execute()\n"
            "p.publish(sys.argv[2], b'end'); p.execute()")
    return subprocess.Popen([sys.executable, "-c", code, url, channel, str(n)])


async def listening(url: str, messages: int) -> dict[str, float]:
    out: dict[str, float] = {}
    done = asyncio.Event()
    heard = 0

    def on_message(channel: bytes, data: bytes) -> None:
        nonlocal heard
        heard += 1
        if data == b"end":
            done.set()

    sub = Subscriber(url, on_message, lambda: None)
    task = asyncio.create_task(sub.run())
    await asyncio.wait_for(sub.connected.wait(), 5)
    await sub.subscribe("bench:commits")
    start = time.process_time()
    flood = _flood(url, "bench:commits", messages)
    await asyncio.wait_for(done.wait(), 120)
    out["subscriber.py"] = (time.process_time() - start) / messages * 1e6
    assert heard == messages + 1, (heard, messages)
    flood.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

    client = aioredis.Redis.from_url(url)
    pubsub = client.pubsub()
    await pubsub.subscribe("bench:commits")
    await pubsub.get_message(timeout=1)  # the confirmation
    start = time.process_time()
    flood = _flood(url, "bench:commits", messages)
    heard = 0
    while True:
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=5)
        heard += message is not None
        if message is not None and message["data"] == b"end":
            break
    assert heard == messages + 1, (heard, messages)
    out["redis-py"] = (time.process_time() - start) / messages * 1e6
    flood.wait()
    await pubsub.aclose()
    await client.aclose()
    return out


async def run(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Prints the medians of each pair, and returns them (what -> side -> CPU-us)."""
    rounds: dict[str, dict[str, list[float]]] = {}
    for _ in range(args.rounds):
        for name, figures in ((f"commits: client CPU-us per batch of {args.per_batch}",
                               await commits(args.redis, args.batches, args.per_batch)),
                              ("relay publishes: client CPU-us per frame",
                               await publishes(args.redis, args.frames, 16)),
                              ("commit messages heard: client CPU-us per message",
                               await listening(args.redis, args.messages))):
            for side, value in figures.items():
                rounds.setdefault(name, {}).setdefault(side, []).append(value)
    print(f"hand-written vs redis-py, medians of {args.rounds} rounds (pid {os.getpid()}):")
    medians: dict[str, dict[str, float]] = {}
    for name, sides in rounds.items():
        medians[name] = {side: statistics.median(values) for side, values in sides.items()}
        (mine, ma), (theirs, mb) = medians[name].items()
        print(f"  {name}: {mine} {ma:.1f}, {theirs} {mb:.1f} ({mb / ma:.1f}x)")
    return medians


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batches", type=int, default=300)
    p.add_argument("--per-batch", type=int, default=8)
    p.add_argument("--frames", type=int, default=20000)
    # (past ~8,000 unread 4 KB messages Redis cuts a slow listener off: pubsub's output buffer)
    p.add_argument("--messages", type=int, default=5000)
    return p


if __name__ == "__main__":
    asyncio.run(run(parser().parse_args()))
