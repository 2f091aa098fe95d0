"""Garbage-collector pauses of every Python process started with this directory on PYTHONPATH
(``bench.loadgen`` passes its PYTHONPATH on to the server it starts).

    GCWATCH=/tmp/gc PYTHONPATH=bench/gcwatch .venv/bin/python -m bench.loadgen --rooms 250 \\
        --sat-rooms 1 --duration 20 --echo-conns 2 --idle 0
    grep gen2 /tmp/gc/*server*

Writes one line per collection of the middle or oldest generation, or any longer than 2 ms, to
``$GCWATCH/gc.<pid>.<server|other>.log``: wall time, generation, pause, objects collected and,
after a full collection, the objects still tracked. ``GCTHRESH=a,b,c`` sets a server's
thresholds (the server sets its own at start; this overrides them for an experiment).
"""

from __future__ import annotations

import gc
import os
import sys
import time

_DIR = os.environ.get("GCWATCH")
_SERVER = "serve" in sys.argv

if _DIR:
    os.makedirs(_DIR, exist_ok=True)
    _log = open(f"{_DIR}/gc.{os.getpid()}.{'server' if _SERVER else 'other'}.log", "w", buffering=1)  # noqa: SIM115
    _started = [0.0]

    def _watch(phase: str, info: dict) -> None:
        if phase == "start":
            _started[0] = time.perf_counter()
            return
        pause = (time.perf_counter() - _started[0]) * 1000
        generation = info["generation"]
        if generation >= 1 or pause > 2:
            tracked = len(gc.get_objects()) if generation == 2 else -1
            _log.write(f"{time.time():.3f} gen{generation} {pause:.1f}ms "
                       f"collected={info['collected']} tracked={tracked}\n")

    gc.callbacks.append(_watch)

if os.environ.get("GCTHRESH") and _SERVER:
    _wanted = tuple(map(int, os.environ["GCTHRESH"].split(",")))
    import app.main  # the server sets its own thresholds at start: this replaces them

    app.main.FULL_COLLECTION_EVERY = _wanted[2]
    gc.set_threshold(*_wanted)
