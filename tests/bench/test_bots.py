"""bench.bots runs against the server as it is now: its probe pings every 50 ms and its paced
humans are a thousand sockets from one address, so every per-address limit must be lifted (the
ping allowance added with the flood gate once left the probe waiting for a pong forever)."""

from __future__ import annotations

import argparse
import asyncio

from bench import bots


async def test_a_bot_run_with_paced_humans_beside_it_reports_both(capsys):
    args = argparse.Namespace(root=None, levels=["hard"], rooms=[2], duration=1.0, paced=3,
                              set=[])
    await asyncio.wait_for(bots.main_async(args), 120)
    out = capsys.readouterr().out.splitlines()
    probe = [line for line in out if "probe ping" in line]
    humans = [line for line in out if "beside them, paced 3 rooms" in line]
    assert len(probe) == 1 and "hard x   2 rooms" in probe[0], out
    assert int(probe[0].split("(")[1].split(" pings")[0]) >= 10  # ~20 in the second measured
    assert len(humans) == 1 and "errors 0" in humans[0], out
    assert float(humans[0].split(": ")[1].split(" actions/s")[0]) > 0
