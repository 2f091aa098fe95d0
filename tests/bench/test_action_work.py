"""bench.action_work keeps working: its stand-in table plays through rounds and rematches on
the server's own code, and the same seed plays the same games (what its callgrind comparison
relies on)."""

from __future__ import annotations

import secrets

from bench import action_work


async def test_the_bench_plays_whole_rounds_and_the_same_seed_plays_the_same_games(monkeypatch):
    token_hex = secrets.token_hex
    frames: list[list[str]] = [[], []]
    rounds: list[int] = []
    for run in (0, 1):
        monkeypatch.setattr(action_work.StubSocket, "send",
                            # the fan-out's frames are bytes, the other answers str
                            lambda self, text, run=run: frames[run].append(
                                text.decode() if isinstance(text, bytes) else text))
        assert await action_work.run(600, seed=4) > 0
        rounds.append(sum('"kind":"started"' in text for text in frames[run]))
    assert rounds[0] >= 2  # the table finished a round and the host asked for the rematch
    assert frames[0] == frames[1]  # the same games, frame for frame
    assert secrets.token_hex is token_hex  # the seeded stand-in is gone again
