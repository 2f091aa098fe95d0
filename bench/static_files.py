"""What a file of the client costs the server: ``python -m bench.static_files [--requests 400]``.

A page fetches ~65 of them (55 scripts, 9 stylesheets, the page), so this is most of the server's
share of a first visit. One embedded server, one keep-alive client, in rounds so that a drift in
the machine's pace falls on all alike; the server process's CPU per request (from /proc):

- ``/healthz``: the baseline, the least a request costs through the app;
- ``/README.md``: a file through Starlette's StaticFiles (a stat and a read in a worker thread);
  the folder's notes are not one of the shell's files, so they go that way, as every file did;
- ``/js/cards.js``, ``/css/style.css``, ``/``: the shell's files, answered from the bytes its
  version was made from (app/api/app_shell.py);
- ``/js/cards.js`` with its ETag: the 304 a browser's revalidation gets.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import httpx
import psutil

from bench.bots import _stop, spawn_embedded

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400, help="requests of each kind a round")
    args = parser.parse_args()
    server, url = spawn_embedded(ROOT, {})
    proc = psutil.Process(server.pid)

    def cpu() -> float:
        times = proc.cpu_times()
        return times.user + times.system

    try:
        with httpx.Client(base_url=url) as client:
            etag = client.get("/js/cards.js").headers["etag"]
            #: name -> (path, request headers)
            plain = ("/healthz", "/README.md", "/js/cards.js", "/css/style.css", "/")
            cases = {path: (path, {}) for path in plain}
            cases["/js/cards.js (304)"] = ("/js/cards.js", {"if-none-match": etag})
            runs: dict[str, list[float]] = {name: [] for name in cases}
            for path, headers in cases.values():  # warm-up
                for _ in range(20):
                    client.get(path, headers=headers)
            for _ in range(ROUNDS):
                for name, (path, headers) in cases.items():
                    before = cpu()
                    for _ in range(args.requests):
                        answer = client.get(path, headers=headers)
                    runs[name].append((cpu() - before) / args.requests * 1000)
                    assert answer.status_code in (200, 304), (name, answer.status_code)
        print(f"server CPU ms per request (median of {ROUNDS} rounds of {args.requests})")
        for name, values in runs.items():
            print(f"{name:24}{statistics.median(values):8.2f}")
    finally:
        _stop(server)


if __name__ == "__main__":
    main()
