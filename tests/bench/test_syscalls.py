"""bench.syscalls runs and prints a positive cost for every call it times."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_syscall_benchmark_prints_each_cost():
    out = subprocess.run([sys.executable, "-m", "bench.syscalls", "--calls", "2000"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    costs = re.findall(r"^(.+): ([0-9.]+) us CPU per (?:call|send)$", out, flags=re.M)
    assert [name for name, _ in costs] == [
        "os.getpid()", "asyncio.get_running_loop()", "loopback TCP send of 500 B",
        "loopback TCP send of 5000 B", "loopback TCP send of 50000 B"], out
    assert all(float(cost) >= 0 for _, cost in costs), out
