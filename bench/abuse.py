"""Hostile sockets beside a paced game: ``python -m bench.abuse [--rooms 10] [--duration 8]``.

For each server setting (as bench.paced_tail takes them; ``-``, the default: the limits'
defaults) one server process on the real Redis, with every limit at its default unless the
setting says otherwise.
On it, paced rooms (``--rooms`` x 4 scripted players at 1 action per player per second, as
bench.loadgen's paced run) are measured alone and while 1, 4 and 16 hostile sockets flood
(``--flooders``): each says hello in a room of its own, then writes frames as fast as the
server takes them (bad JSON, pings and valid messages in turn, ``--frames`` of them at most),
reading whatever comes back (a reader too slow for its answers would be dropped as a stalled
one); a socket the server closes comes back after ``--reconnect-ms``. The flooders
run in a process of their own, each from a loopback address of its own (127.0.x.y), so the
per-address limits see them as strangers to the paced players (127.0.0.1).

Printed: the paced rooms' action latency p50/p99 (from a message to its patch at every seat of
the room) for each number of flooders, side by side per setting, with what the flooders did
(frames written, sockets closed, handshakes refused). ``--also LABEL=PATH`` adds a row for the
server of another checkout (e.g. ``git archive`` of an older commit; it ignores the settings it
does not know), run with the first setting.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import multiprocessing
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.loadgen import ROOT, game_run, run_fast, settings_env, spawn

#: every limit at its default (bench.loadgen.spawn lifts them for load runs)
DEFAULT_LIMITS = {"RATE_BURST": "20", "RATE_PER_S": "5", "SOCKETS_PER_IP": "64", "FAILED_JOINS_PER_MIN": "10"}
FRAMES = (b"{not json", b'{"type":"ping"}', b'{"type":"draw","id":"flood"}')


def masked(payload: bytes) -> bytes:
    """A client's text frame (RFC 6455 5.2: masked; payloads under 126 bytes)."""
    mask = os.urandom(4)
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


CHUNK = b"".join(masked(FRAMES[i % len(FRAMES)]) for i in range(600))  # ~16 KB, 600 frames


def _handshake(port: int, code: str, source: str) -> socket.socket | None:
    """A WebSocket to ``/ws/code`` from ``source``; None when refused (or nothing answers)."""
    sock = socket.socket()
    sock.settimeout(5)
    try:
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall((f"GET /ws/{code} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                      f"Sec-WebSocket-Version: 13\r\n\r\n").encode())
        response = b""
        while b"\r\n\r\n" not in response:
            part = sock.recv(4096)
            if not part:
                break
            response += part
    except OSError:
        sock.close()
        return None
    if b" 101 " not in response.split(b"\r\n", 1)[0]:
        sock.close()
        return None
    return sock


def _flood(port: int, code: str, token: str, source: str, stop: threading.Event, limit: int,
           reconnect_s: float, counts: dict[str, int]) -> None:
    """One hostile socket: hello, then frames as fast as the server takes them, again after a
    close, until ``stop`` (or ``limit`` frames)."""
    hello = masked(json.dumps({"type": "hello", "token": token}).encode())
    while not stop.is_set() and counts["frames"] < limit:
        sock = _handshake(port, code, source)
        if sock is None:
            counts["refused"] += 1
            stop.wait(reconnect_s)
            continue
        threading.Thread(target=_drain, args=(sock,), daemon=True).start()
        try:
            sock.sendall(hello)
            sock.settimeout(1)
            while not stop.is_set() and counts["frames"] < limit:
                sock.sendall(CHUNK)  # blocks while the server does not read: its pace is ours
                counts["frames"] += 600
        except OSError:
            pass
        finally:
            sock.close()
        counts["closed"] += 1
        stop.wait(reconnect_s)


def _drain(sock: socket.socket) -> None:
    """Read (and forget) what the server sends, until the socket is gone."""
    while True:
        try:
            if not sock.recv(65536):
                return
        except TimeoutError:
            continue
        except OSError:
            return


def flooders(port: int, rooms: list[tuple[str, str]], base: int, limit: int, reconnect_s: float,
             stop: Any, out: Any) -> None:
    """The flooding process: a thread per hostile socket (``rooms``: code and token each), the
    n-th from 127.0.``base``.n; ``out`` gets their counts when ``stop`` is set."""
    done = threading.Event()
    counts = [{"frames": 0, "closed": 0, "refused": 0} for _ in rooms]
    threads = [threading.Thread(target=_flood, args=(port, code, token, f"127.0.{base}.{i + 2}", done,
                                                     limit, reconnect_s, counts[i]), daemon=True)
               for i, (code, token) in enumerate(rooms)]
    for thread in threads:
        thread.start()
    stop.wait()
    done.set()
    for thread in threads:
        thread.join(5)
    out.put({k: sum(c[k] for c in counts) for k in ("frames", "closed", "refused")})


async def phase(url: str, pid: int, hostile: int, base: int, args: argparse.Namespace) -> dict[str, Any]:
    """The paced rooms measured while ``hostile`` sockets flood."""
    port = int(url.rsplit(":", 1)[1])
    rooms = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for _ in range(hostile):
            made = (await http.post("/api/rooms", json={"name": "Mallory"})).json()
            rooms.append((made["code"], made["token"]))
    ctx = multiprocessing.get_context("spawn")
    stop, out = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=flooders, args=(port, rooms, base, args.frames, args.reconnect_ms / 1000,
                                              stop, out), daemon=True)
    if hostile:
        proc.start()
    t0 = time.perf_counter()
    try:
        run = await game_run(url, pid, args.rooms, 4, 1.0, args.duration)
    finally:
        elapsed = time.perf_counter() - t0
        counts = {"frames": 0, "closed": 0, "refused": 0}
        if hostile:
            stop.set()
            counts = await asyncio.get_running_loop().run_in_executor(None, out.get, True, 30)
            proc.join(10)
    return {**run, **counts, "frames_per_s": counts["frames"] / elapsed}


def label(spec: str) -> str:
    return "defaults" if spec == "-" else spec


async def main_async(args: argparse.Namespace) -> None:
    results: list[tuple[str, list[dict[str, Any]]]] = []
    base = 1
    rows = [(label(spec), spec, ROOT) for spec in args.settings]
    rows += [(name, args.settings[0], Path(path)) for name, path in (a.split("=", 1) for a in args.also)]
    for name, spec, root in rows:
        env = {**DEFAULT_LIMITS, **settings_env(spec)}
        proc, url = spawn(args.redis, env=env, root=root)
        runs = []
        try:
            for hostile in args.flooders:
                run = await phase(url, proc.pid, hostile, base, args)
                base += 1
                runs.append(run)
                print(f"{name:>20} {hostile:>2} flooding: {run['actions_per_s']:.0f} actions/s, "
                      f"p50 {run['p50']:.1f} ms, p99 {run['p99']:.1f} ms, errors {run['errors']}; "
                      f"flooders: {run['frames']} frames written ({run['frames_per_s']:.0f}/s), "
                      f"{run['closed']} closed, {run['refused']} refused", flush=True)
        finally:
            proc.terminate()
            proc.wait(10)
        results.append((name, runs))
    head = "".join(f"{'alone' if n == 0 else f'{n} flooding':>16}" for n in args.flooders)
    print(f"\npaced {args.rooms} rooms x 4 at 1 action/s each, action latency p50 / p99 (ms)")
    print(f"{'setting':>20}{head}")
    for name, runs in results:
        print(f"{name:>20}" + "".join(f"{r['p50']:>8.1f} /{r['p99']:>6.1f}" for r in runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("settings", nargs="*", default=["-"])
    parser.add_argument("--rooms", type=int, default=10)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--flooders", type=lambda s: [int(n) for n in s.split(",")], default=[0, 1, 4, 16])
    parser.add_argument("--frames", type=int, default=2_000_000, help="at most, per flooding socket")
    parser.add_argument("--reconnect-ms", type=float, default=50.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--also", action="append", default=[], metavar="LABEL=PATH",
                        help="a row for the server of another checkout")
    run_fast(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
