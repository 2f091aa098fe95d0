"""The host ends the night after a round (issue #47.2): ``end_night`` marks the room
(``room.night_over``, event ``night_over``) so every screen shows the night's story, until the next
round is dealt."""

from __future__ import annotations

import pytest

from .conftest import module_server
from .harness import ServerProcess
from .tables import level, ok, refused, started

FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}


@pytest.fixture
def server(backend: str, request: pytest.FixtureRequest, module_servers) -> ServerProcess:
    return module_server(backend, request, module_servers)


async def test_the_host_ends_the_night_after_a_round_and_the_next_deal_goes_on(server):
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": FIVES, "hand_size": 2, "turn_timer_s": 0})
    await refused(ann, {"type": "end_night"}, "not_over", bob)          # a round plays
    while ann.view["game"]["winner"] is None:
        mover = ann if ann.my_turn() else bob
        await ok(mover, {"type": "play", "card": mover.view["hand"][0], "uno": len(mover.view["hand"]) == 2})
        await level([ann, bob])
    assert "night_over" not in ann.view["room"]
    await refused(bob, {"type": "end_night"}, "not_host", ann)
    await ok(ann, {"type": "end_night"})
    await level([ann, bob])
    assert ann.view["room"]["night_over"] is True and bob.view["room"]["night_over"] is True
    assert [e["by"] for e in bob.events if e["kind"] == "night_over"] == [ann.you]
    version = ann.version
    await ok(ann, {"type": "end_night"})                                # said twice: nothing new
    await level([ann, bob])
    assert ann.version == version
    await ok(ann, {"type": "rematch"})                                  # one more round after all
    await level([ann, bob])
    assert ann.view["room"]["status"] == "playing" and "night_over" not in bob.view["room"]
    for c in (ann, bob):
        await c.close()
