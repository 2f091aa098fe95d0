"""bench.loadgen_scale shares the rooms out over the processes, or gives each process its own."""

from __future__ import annotations

import argparse

import pytest

from bench import loadgen_scale


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


@pytest.mark.parametrize("fresh", [True, False])
async def test_idle_memory_is_measured_on_a_fresh_process_when_the_run_started_its_servers(
        monkeypatch, capsys, fresh):
    from bench import loadgen

    spawned: list[_Proc] = []
    measured: list[tuple[str, int]] = []

    def spawn(redis):
        proc = _Proc()
        proc.pid = 99
        spawned.append(proc)
        return proc, "http://fresh"

    async def idle_memory(url, pid, conns):
        measured.append((url, pid))
        return 20.0

    monkeypatch.setattr(loadgen, "spawn", spawn)
    monkeypatch.setattr(loadgen, "idle_memory", idle_memory)
    args = argparse.Namespace(redis="redis://x", idle=1000)
    await loadgen.print_idle_memory(args, "http://used", 7, fresh=fresh)
    assert measured == ([("http://fresh", 99)] if fresh else [("http://used", 7)])
    assert len(spawned) == int(fresh)
    assert ("a fresh server process" in capsys.readouterr().out) is fresh


def test_paired_ratios_compare_each_repeat_with_its_own_first_count():
    """A machine that runs slower in the second repeat slows every count of that repeat: the
    ratios within each repeat stay put where the ratio of the medians would move."""
    runs = {1: [{"cpu_us_per_action": 1000.0}, {"cpu_us_per_action": 1500.0}, {"cpu_us_per_action": 1000.0}],
            2: [{"cpu_us_per_action": 1100.0}, {"cpu_us_per_action": 1650.0}, {"cpu_us_per_action": 1250.0}],
            3: [{"cpu_us_per_action": 1000.0}, {"cpu_us_per_action": 1500.0}, {"cpu_us_per_action": 2000.0}]}
    line = loadgen_scale.paired_ratios(runs, [1, 2, 3])
    assert line == ("paired by repeat, median ratio to 1 process(es): "
                    "2: 91% [80%, 91%, 91%]; 3: 100% [50%, 100%, 100%]")
