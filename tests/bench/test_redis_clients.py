"""bench.redis_clients, small, so it cannot rot: each hand-written Redis piece and redis-py do the
same work on the machine's Redis (every commit answered, every message heard: the bench asserts
both), and a figure comes out for each side."""

from __future__ import annotations

from bench import redis_clients


async def test_each_hand_written_piece_is_measured_beside_redis_py(capsys):
    args = redis_clients.parser().parse_args(["--rounds", "1", "--batches", "20", "--frames", "640",
                                              "--messages", "500"])
    medians = await redis_clients.run(args)
    assert {name.split(":")[0] for name in medians} == {"commits", "relay publishes", "commit messages heard"}
    for sides in medians.values():
        assert len(sides) == 2 and "redis-py" in sides, sides
        assert all(value > 0 for value in sides.values()), sides
    figures = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert len(figures) == 3 and all("redis-py" in line for line in figures), figures
