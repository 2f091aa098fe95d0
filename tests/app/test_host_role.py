"""The room stays its creator's (protocol.md "The host"), black-box over real sockets: a host
whose phone sleeps past the reconnect grace hands the role only to someone who was already
seated and is connected, never to whoever comes in with the code meanwhile, and takes it back
on return. The attack this closes: a stranger with the code joined while the host was away,
became host, stayed host after the host came back, removed and barred them, and locked the room."""

from __future__ import annotations

import pytest

from .harness import Client, ServerProcess
from .tables import level, ok, refused, seated, started

SETTINGS = {"reconnect_grace_ms": 800, "drop_delay_ms": 0}
FIVES = {"deck": {"r-5": 30, "y-5": 30, "g-5": 30, "b-5": 30}, "turn_timer_s": 0, "catch_window_s": 30}


@pytest.fixture
def grace_server():
    server = ServerProcess(**SETTINGS).start()
    yield server
    err = server.stop()
    assert "Traceback" not in err, err[-3000:]


async def _away(watcher: Client, player: str) -> None:
    """``player``'s socket closed and their reconnect grace ran out (a bot stands in)."""
    await watcher.until(lambda m: m["type"] == "patch" and any(
        e["kind"] == "replaced_by_bot" and e["player"] == player for e in m["events"]), timeout=15)


async def test_a_stranger_who_joins_while_the_host_is_away_never_hosts_and_the_host_returns(grace_server):
    server = grace_server
    ann, bob = await started(server, ["Ann", "Bob"], FIVES)
    await ann.close()  # the host's phone sleeps
    await _away(bob, ann.you)
    # Bob sat before Ann dropped and is here: he stands in
    assert bob.view["room"]["host"] == bob.you
    eve_info = server.join(ann.code, "Eve")  # a stranger with the code
    eve = await Client(server, ann.code, eve_info["token"]).connect()
    await level([bob, eve])
    assert eve.view["room"]["host"] == bob.you
    await refused(eve, {"type": "set_room", "locked": True}, "not_host", bob)
    await refused(eve, {"type": "remove_seat", "player_id": ann.you}, "not_host", bob)
    # Ann's phone wakes: the room is hers again
    back = await Client(server, ann.code, ann.token).connect()
    await level([back, bob, eve])
    assert back.view["room"]["host"] == ann.you == bob.view["room"]["host"] == eve.view["room"]["host"]
    await ok(back, {"type": "react", "reaction": "gg"})
    for c in (back, bob, eve):
        await c.close()


async def test_alone_with_bots_an_away_host_keeps_the_room_from_a_newcomer(grace_server):
    """The issue's night: the host plays with bots, the phone sleeps past the grace, anyone
    with the code joins. Nobody was seated to stand in, so nobody hosts until the host is back."""
    server = grace_server
    (ann,) = await seated(server, ["Ann"], FIVES)
    await ok(ann, {"type": "add_bot", "level": "easy"})
    await ok(ann, {"type": "add_bot", "level": "easy"})
    await ok(ann, {"type": "start"})
    code, token = ann.code, ann.token
    await ann.close()
    eve_info = server.join(code, "Eve")
    eve = await Client(server, code, eve_info["token"]).connect()
    if not any(p["id"] == ann.you and p["bot"] for p in eve.view["players"]):
        await _away(eve, ann.you)
    assert eve.view["room"]["host"] == ann.you
    for message in ({"type": "set_room", "locked": True}, {"type": "remove_seat", "player_id": ann.you}):
        answer = await eve.send(message)  # (the bots play on meanwhile: the table moves)
        assert answer["type"] == "error" and answer["code"] == "not_host", answer
    assert not eve.view["room"].get("locked") and ann.you in [p["id"] for p in eve.view["players"]]
    back = await Client(server, code, token).connect()
    await level([back, eve])
    assert back.view["room"]["host"] == ann.you
    await ok(back, {"type": "set_room", "locked": True})
    for c in (back, eve):
        await c.close()


async def test_the_connected_player_who_has_sat_longest_stands_in_until_the_host_is_back(grace_server):
    server = grace_server
    ann, bob, cat = await started(server, ["Ann", "Bob", "Cat"], FIVES)
    await bob.close()  # Bob, who sat longest after Ann, is not connected
    await _away(cat, bob.you)
    await ann.close()
    await _away(cat, ann.you)
    assert cat.view["room"]["host"] == cat.you
    bob = await Client(server, ann.code, bob.token).connect()  # back: Cat keeps it meanwhile
    await level([bob, cat])
    assert bob.view["room"]["host"] == cat.you
    await cat.close()
    await _away(bob, cat.you)
    assert bob.view["room"]["host"] == bob.you
    back = await Client(server, ann.code, ann.token).connect()
    await level([back, bob])
    assert bob.view["room"]["host"] == ann.you
    for c in (back, bob):
        await c.close()
