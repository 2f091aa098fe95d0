"""app.loadgen_scale shares the rooms out over the processes, or gives each process its own."""

from __future__ import annotations

import argparse

import pytest

from app import loadgen_scale


class _Proc:
    pid = 1

    def terminate(self) -> None:
        pass

    def wait(self, timeout: float) -> None:
        pass


@pytest.mark.parametrize(("per_process", "expected"), [(False, [40, 40, 40]), (True, [40, 80, 120])])
async def test_the_rooms_driven_for_each_process_count(monkeypatch, per_process, expected):
    driven: list[tuple[int, int]] = []

    async def game_run(urls, pids, rooms, clients, rate, duration, spread):
        driven.append((len(urls), rooms))
        return {"cpu_us_per_action": 1000.0}

    monkeypatch.setattr(loadgen_scale, "spawn", lambda redis, prefix: (_Proc(), "http://x"))
    monkeypatch.setattr(loadgen_scale, "game_run", game_run)
    args = argparse.Namespace(redis="redis://x", rooms=40, clients=4, rate=1.0, duration=1.0,
                              per_process=per_process)
    for n in (1, 2, 3):
        await loadgen_scale._measure(n, "room", args)
    assert driven == list(zip([1, 2, 3], expected, strict=True))
