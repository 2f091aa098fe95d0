"""bench.paced_tail alternates paced runs between servers started with different settings."""

from __future__ import annotations

import argparse

import pytest

from bench import paced_tail

from ..app.harness import real_redis_available


async def test_each_setting_gets_its_own_server_and_its_runs(capsys):
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    args = argparse.Namespace(settings=["-", "GC_PACED=false"], runs=2, rooms=2, duration=0.5,
                              redis="redis://127.0.0.1:6379/0")
    await paced_tail.main_async(args)
    out = capsys.readouterr().out.splitlines()
    runs = [line for line in out if "actions/s" in line]
    assert [line.split(":")[0].strip() for line in runs] == ["-", "GC_PACED=false"] * 2
    assert all("errors 0" in line for line in runs), runs
    summaries = [line for line in out if "p99 median" in line]
    assert len(summaries) == 2 and all("over 2 runs" in line for line in summaries)
