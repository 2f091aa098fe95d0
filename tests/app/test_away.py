"""A closed tab never holds up the table (issue #44.1): a disconnected player's turn goes to their
seat's bot after AWAY_TURN_GRACE_MS, while the seat stays theirs; the host can hand a disconnected
seat to its bot at once (``bot_plays``); every view marks such a seat ``away``."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import module_server
from .harness import Client, ServerProcess
from .tables import level, ok, quiet, refused, started

FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}  # every card plays on every other
CALM = {"turn_timer_s": 0, "catch_window_s": 30}  # no turn timer: only the away grace moves a turn
# the reconnect grace far off: whatever hands a seat to its bot here is the short turn grace
SHORT = {"away_turn_grace_ms": 300, "reconnect_grace_ms": 600_000, "drop_delay_ms": 0}
HOST_ONLY = {"away_turn_grace_ms": 0, "reconnect_grace_ms": 600_000, "drop_delay_ms": 0}


@pytest.fixture
def server(backend: str, request: pytest.FixtureRequest, module_servers) -> ServerProcess:
    return module_server(backend, request, module_servers)


def seat(c: Client, player: str) -> dict[str, Any]:
    return next(p for p in c.view["players"] if p["id"] == player)


async def saw(c: Client, kind: str, **data: Any) -> None:
    def seen() -> bool:
        return any(e["kind"] == kind and all(e.get(k) == v for k, v in data.items()) for e in c.events)
    if not seen():
        await c.until(lambda m: seen())


@pytest.mark.settings(**SHORT)
async def test_a_closed_tabs_turn_goes_to_its_bot_after_the_short_grace_and_the_seat_stays_theirs(server):
    ann, bob, cat = await started(server, ["Ann", "Bob", "Cat"], {"deck": FIVES, **CALM})
    order = [p["id"] for p in ann.view["players"]]
    first = ann.view["game"]["turn"]
    clients = {c.you: c for c in (ann, bob, cat)}
    mover = clients[first]
    gone = clients[order[(order.index(first) + 1) % 3]]  # the next to play closes their tab
    stays = next(c for c in (ann, bob, cat) if c not in (mover, gone))
    token = gone.token
    await gone.close()
    await saw(mover, "disconnected", player=gone.you)
    assert seat(mover, gone.you)["away"] is False  # a drop alone is not away: it is not their turn
    await ok(mover, {"type": "play", "card": mover.view["hand"][0]})
    # their turn waits the short grace, then their seat's bot plays it
    await saw(mover, "replaced_by_bot", player=gone.you)
    await saw(mover, "played", player=gone.you)
    assert seat(mover, gone.you)["away"] is True and seat(mover, gone.you)["bot"] is True
    assert ann.view["room"]["host"] == ann.you  # nobody's host role moves within the reconnect grace
    await level([mover, stays])
    assert seat(stays, gone.you)["away"] is True
    # a hello takes the seat back at once, the hand as the bot left it
    back = await Client(server, ann.code, token).connect()
    await saw(mover, "reconnected", player=gone.you)
    await level([mover, stays, back])
    assert seat(mover, gone.you)["away"] is False and seat(mover, gone.you)["bot"] is False
    assert len(back.view["hand"]) == seat(mover, gone.you)["cards"]
    for c in (mover, stays, back):
        await c.close()


@pytest.mark.settings(**SHORT)
async def test_the_creators_turn_goes_to_a_bot_but_the_host_role_stays_until_the_reconnect_grace(server):
    ann, bob = await started(server, ["Ann", "Bob"], {"deck": FIVES, **CALM})
    if ann.view["game"]["turn"] == ann.you:
        await ok(ann, {"type": "play", "card": ann.view["hand"][0]})
        await level([ann, bob])
    token = ann.token
    await ann.close()
    await saw(bob, "disconnected", player=ann.you)
    await ok(bob, {"type": "play", "card": bob.view["hand"][0]})
    await saw(bob, "replaced_by_bot", player=ann.you)
    await saw(bob, "played", player=ann.you)
    assert seat(bob, ann.you)["away"] is True
    assert bob.view["room"]["host"] == ann.you
    await bob.until_view(lambda v: v["game"]["turn"] == bob.you)
    back = await Client(server, bob.code, token).connect()
    await level([bob, back])
    assert back.view["room"]["host"] == ann.you and seat(back, ann.you)["away"] is False
    for c in (bob, back):
        await c.close()


@pytest.mark.settings(**HOST_ONLY)
async def test_the_host_hands_a_disconnected_seat_to_its_bot_now(server):
    ann, bob, cat = await started(server, ["Ann", "Bob", "Cat"], {"deck": FIVES, **CALM})
    # refused, changing nothing: not the host; a connected player; nobody; a bot's own seat
    await refused(bob, {"type": "bot_plays", "player_id": cat.you}, "not_host", ann, cat)
    await refused(ann, {"type": "bot_plays", "player_id": cat.you}, "not_disconnected", bob, cat)
    await refused(ann, {"type": "bot_plays", "player_id": "p-nobody"}, "not_disconnected", bob, cat)
    await refused(ann, {"type": "bot_plays", "player_id": "x" * 65}, "bad_message", bob, cat)
    await cat.close()
    await saw(ann, "disconnected", player=cat.you)
    await level([ann, bob])
    # no turn grace here: Cat's seat waits for Cat until the host hands it on
    if ann.view["game"]["turn"] != cat.you:
        await quiet(ann, bob)
        assert seat(ann, cat.you)["away"] is False
    await ok(ann, {"type": "bot_plays", "player_id": cat.you})
    await saw(ann, "replaced_by_bot", player=cat.you)
    await level([ann, bob])
    assert seat(bob, cat.you)["away"] is True
    await refused(ann, {"type": "bot_plays", "player_id": cat.you}, "not_disconnected", bob)
    # the bot plays Cat's turns from now on
    while ann.view["game"]["turn"] != cat.you:
        mover = ann if ann.view["game"]["turn"] == ann.you else bob
        await ok(mover, {"type": "play", "card": mover.view["hand"][0]})
        await level([ann, bob])
    await saw(ann, "played", player=cat.you)
    for c in (ann, bob):
        await c.close()


@pytest.mark.settings(**HOST_ONLY)
async def test_in_the_lobby_a_seat_waits_for_its_player(server):
    host = server.create("Ann", {"deck": FIVES, **CALM})
    ann = await Client(server, host["code"], host["token"]).connect()
    bob_info = server.join(host["code"], "Bob")  # never says hello: disconnected
    await ann.until_view(lambda v: len(v["players"]) == 2)
    await refused(ann, {"type": "bot_plays", "player_id": bob_info["player_id"]}, "not_started")
    assert seat(ann, bob_info["player_id"])["away"] is False
    await ann.close()
