"""bench.side_by_side drives both checkouts' servers in turn and reports one figure per run."""

from __future__ import annotations

import pytest

from bench import side_by_side
from bench.loadgen import ROOT

from ..app.harness import real_redis_available


async def test_both_servers_run_in_turn_and_each_run_is_measured():
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    base, new = await side_by_side.compare([ROOT, ROOT], "redis://127.0.0.1:6379/0", pairs=2,
                                           rooms=2, seconds=0.5)
    assert len(base) == len(new) == 2
    assert all(cost > 0 for cost in base + new), (base, new)
