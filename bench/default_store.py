"""The default setup's store, old and new side by side in one run:
``python -m bench.default_store OLD [--runs 4] [--rooms 50] [--mb 100]``.

OLD is a checkout whose default store is to be compared (e.g. ``git worktree add /tmp/old
341ff3b``: the in-process fakeredis with its journal); this checkout is the new one (a Valkey
child), measured with each ``EMBEDDED_FSYNC``. Every server runs on its embedded defaults (no
``REDIS_URL``), all at once, and the runs alternate between them, so each is read while the
machine is about the same. Printed:

- paced runs (``--rooms`` x 4 players at 1 action/s each): p50/p99 and the server CPU per
  action, the store's child's included (and shown apart);
- idle memory: the app's RSS, and the child's, with no room;
- start-up with ``--mb`` of data: the same commands (room documents written over and over, as a
  night writes them) as the old journal and as the new append-only file, then the new file once
  rewritten as its snapshot; the time from the process's start to its first health answer.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.loadgen import ROOT, game_run, rss_kb, run_fast, spawn, wait_until_up

DOCUMENT = b'{"code":"ROOM","seats":[' + b'{"name":"Player","hand":["r-5","g-7","w-draw6"]},' * 40 + b"{}]}"


def _pack(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%b\r\n" % (len(a), a) for a in args)


def commands(megabytes: int, rooms: int = 30_000) -> bytes:
    """``megabytes`` of writes: ``rooms`` rooms' documents written in turn (30,000 of ~3.4 KB: each
    about once, so the data is as large as the commands), their steps appended, their TTLs
    refreshed."""
    out, size, n = [], 0, 0
    while size < megabytes * 1_000_000:
        key = b"mercyless:{R%05d}" % (n % rooms)
        batch = (_pack(b"HSET", key + b":room", b"v", b"%d" % n, b"d", DOCUMENT)
                 + _pack(b"RPUSH", key + b":steps", b'{"step":%d,"card":"r-5"}' % n)
                 + _pack(b"PEXPIRE", key + b":room", b"21600000"))
        out.append(batch)
        size += len(batch)
        n += 1
    return b"".join(out)


def store_pid(folder: Path) -> int | None:
    try:
        return int((folder / "valkey.pid").read_text())
    except (OSError, ValueError):
        return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed_start(root: Path, store: str) -> float:
    """Seconds from starting ``root``'s server on the embedded store ``store`` to its first
    health answer; the server is stopped after."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(EMBEDDED_STORE=store, LOG_LEVEL="WARNING", PYTHONPATH=str(root),
               DATABASE_URL=f"sqlite+aiosqlite:///{tempfile.gettempdir()}/mercyless-start-{port}.sqlite3")
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port)], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_up(proc, port, within_s=300)
        return time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(120)


def new_store_with(data: bytes, folder: Path, rewritten: bool) -> None:
    """The new store's folder holding ``data``'s commands: as written (the child killed before
    any rewrite) or rewritten as its snapshot."""
    from app.storage.embedded import EmbeddedStore

    store = EmbeddedStore(folder, rewrite_min_mb=100_000)
    url = store.start()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(url.removeprefix("unix://"))
        sock.sendall(data + _pack(b"PING"))
        sock.settimeout(120)
        tail = b""
        while not tail.endswith(b"+PONG\r\n"):
            tail = (tail + sock.recv(1 << 20))[-16:]
        if rewritten:
            sock.sendall(_pack(b"BGREWRITEAOF"))
            sock.recv(100)
    assert store.process is not None
    if rewritten:
        import redis

        client = redis.Redis.from_url(url)
        while (info := client.info("persistence"))["aof_rewrite_in_progress"] or info["aof_rewrites"] < 1:
            time.sleep(0.1)
        client.close()
        store.stop()
    else:
        store.process.send_signal(signal.SIGKILL)
        store.process.wait()
        store.process = None
        store.stop()


async def paced(old: Path, runs: int, rooms: int, duration: float, with_old: bool = True) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="mercyless-store-bench-"))
    setups = [("old (fakeredis + journal)", old, {})] if with_old else []
    setups += [("new, fsync always", ROOT, {"EMBEDDED_FSYNC": "always"}),
               ("new, fsync everysec", ROOT, {"EMBEDDED_FSYNC": "everysec"})]
    servers = []
    try:
        for i, (_, root, env) in enumerate(setups):
            folder = tmp / f"store{i}"
            store_env = {**env, "EMBEDDED_STORE": str(folder if root == ROOT else tmp / f"journal{i}.aof")}
            proc, url = spawn("", env=store_env, root=root)
            servers.append((proc, url, folder))
        await asyncio.sleep(3)
        for (name, _, _), (proc, _, folder) in zip(setups, servers, strict=True):
            child = store_pid(folder)
            print(f"idle  {name:>26}: app RSS {rss_kb(proc.pid) / 1024:.0f} MB"
                  + (f", store child RSS {rss_kb(child) / 1024:.0f} MB" if child else ""), flush=True)
        p99s: list[list[float]] = [[] for _ in setups]
        cpus: list[list[float]] = [[] for _ in setups]
        for n in range(runs):
            order = list(range(len(setups)))
            for k in order if n % 2 == 0 else reversed(order):
                proc, url, folder = servers[k]
                child = store_pid(folder)
                try:
                    run = await game_run(url, proc.pid, rooms, 4, 1.0, duration,
                                         redis_pids=[child] if child else None)
                except RuntimeError as failed:  # (the old store ran out of connections at 50 rooms)
                    print(f"paced {setups[k][0]:>26}: failed: {failed}", flush=True)
                    continue
                store_cpu = sum(run["redis_cpu_us_per_action"])
                p99s[k].append(run["p99"])
                cpus[k].append(run["cpu_us_per_action"] + store_cpu)
                print(f"paced {setups[k][0]:>26}: {run['actions_per_s']:.0f} actions/s, "
                      f"p50 {run['p50']:.1f} ms, p99 {run['p99']:.1f} ms, server CPU-us/action "
                      f"{run['cpu_us_per_action'] + store_cpu:.0f} (the store's child {store_cpu:.0f}), "
                      f"errors {run['errors']}", flush=True)
        for (name, _, _), p, c in zip(setups, p99s, cpus, strict=True):
            if p:
                print(f"paced {name:>26}: p99 median {statistics.median(p):.1f} ms, server CPU-us/action "
                      f"median {statistics.median(c):.0f} over {len(p)} runs")
    finally:
        for proc, _, _ in servers:
            proc.terminate()
            proc.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)


def startup(old: Path, megabytes: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="mercyless-start-bench-"))
    try:
        data = commands(megabytes)
        journal = tmp / "journal.aof"
        journal.write_bytes(data)
        new_store_with(data, tmp / "as-written", rewritten=False)
        new_store_with(data, tmp / "rewritten", rewritten=True)
        sizes = {name: sum(f.stat().st_size for f in (tmp / name / "appendonlydir").iterdir())
                 for name in ("as-written", "rewritten")}
        # the old store rewrites its journal as it starts: each of its starts gets a fresh copy
        old_copy = tmp / "journal-copy.aof"
        shutil.copy(journal, old_copy)
        old_s = timed_start(old, str(old_copy))
        new_s = timed_start(ROOT, str(tmp / "as-written"))
        snap_s = timed_start(ROOT, str(tmp / "rewritten"))
        print(f"start with {len(data) / 1e6:.0f} MB of commands: old {old_s:.2f} s (journal), "
              f"new {new_s:.2f} s (append-only file as written, {sizes['as-written'] / 1e6:.0f} MB), "
              f"new {snap_s:.2f} s (rewritten as its snapshot, {sizes['rewritten'] / 1e6:.1f} MB)",
              flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--rooms", type=int, default=50)
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--skip-paced", action="store_true")
    parser.add_argument("--without-old", action="store_true",
                        help="the paced runs on the new store only (the old one fails past ~40 rooms)")
    args = parser.parse_args()
    if not args.skip_paced:
        run_fast(paced(args.old.resolve(), args.runs, args.rooms, args.duration, not args.without_old))
    if args.mb:
        startup(args.old.resolve(), args.mb)


if __name__ == "__main__":
    main()
