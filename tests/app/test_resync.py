"""``sync`` answers with the room as committed, not as this process last saw it.

A client sends ``sync`` when it saw a version gap (protocol.md), that is when something was
lost on the way. What was lost may be this process's own news of a commit another process made
(its message died with a Redis Cluster primary): then the cached room is the stale copy, and a
welcome made from it would leave the client behind for good. Bug found in #28: after a
primary's failover a client stayed at the round's last version but one, through five syncs.
"""

from __future__ import annotations

from typing import Any

import fakeredis
import orjson
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from app.core.clock import StepClock
from app.core.codes import token_hash
from app.core.protocol import parse_message
from app.core.settings import Settings
from app.processes.hub import Hub
from app.rooms import commands, lobby
from app.rooms.intent import Intent, no_change
from app.rooms.model import Room
from app.storage.store import RoomStore

from .test_fanout import CODE, ClientSocket


@pytest.fixture
async def hubs():
    """Processes on one Redis that hear nothing of each other's commits (no messages)."""
    server = fakeredis.FakeServer()
    clock = StepClock()
    made = [Hub(Settings(bot_delay_ms=0), RoomStore(fakeredis.FakeAsyncRedis(server=server), "t", 3_600_000),
                clock, publishes=False) for _ in range(2)]
    yield made
    for hub in made:
        for actor in hub.actors.values():
            actor.task.cancel()


def _join(name: str):
    def run(loaded: Any, now: int) -> Any:
        return lobby.join(loaded, name)[3]
    return run


async def test_a_sync_is_answered_with_the_commit_this_process_never_heard_of(hubs):
    here, elsewhere = hubs
    room, host, _ = lobby.new_room(CODE, "host", {}, 0)
    room.version = 1
    await here.store.commit(CODE, None, 1, orjson.dumps(room))
    sock = ClientSocket(host)
    here.sockets[CODE] = {host: sock}  # type: ignore[dict-item]
    await here.submit(CODE, Intent("noop", no_change))  # welcomed: this process caches version 1
    assert sock.copy_version == 1
    assert (await elsewhere.submit(CODE, Intent("join", _join("Bob"))))["type"] == "ack"
    stored, _ = await here.store.load(CODE)
    assert stored == 2

    answer = await here.submit(CODE, commands.intent_for(parse_message({"type": "sync", "id": "s1"}), sock,
                                                         here.settings))

    assert answer["type"] == "ack"
    assert sock.copy_version == 2
    assert [p["name"] for p in sock.copy["players"]] == ["host", "Bob"]
    # the next commit here is made on the stored room, and patches the socket from version 2
    assert (await here.submit(CODE, Intent("join", _join("Cat"))))["type"] == "ack"
    assert sock.copy_version == 3


async def test_a_retried_move_whose_commit_was_not_confirmed_brings_the_sockets_to_it(hubs):
    """A commit that reached Redis but whose reply was lost (the node died, a replica did not
    confirm in time) is answered ``unavailable``; the client sends the same id again and gets the
    first answer back (``Duplicate``). The local sockets must then be shown that commit: nobody
    else will send it to them (the process's own commits carry no message to itself)."""
    hub = hubs[0]
    room, host, _ = lobby.new_room(CODE, "host", {}, 0)
    room.version = 1
    await hub.store.commit(CODE, None, 1, orjson.dumps(room))
    sock = ClientSocket(host)
    hub.sockets[CODE] = {host: sock}  # type: ignore[dict-item]
    await hub.submit(CODE, Intent("noop", no_change))
    assert sock.copy_version == 1
    commit = hub.store.commit

    async def reply_lost(*args: Any, **kwargs: Any) -> None:
        await commit(*args, **kwargs)
        hub.store.commit = commit  # type: ignore[method-assign]
        raise RedisConnectionError("connection lost before the reply")

    hub.store.commit = reply_lost  # type: ignore[method-assign]
    bot = {"type": "add_bot", "level": "easy", "id": "b1"}
    first = await hub.submit(CODE, commands.intent_for(parse_message(bot), sock, hub.settings))
    assert first["type"] == "error" and first["code"] == "unavailable"
    assert (await hub.store.load(CODE))[0] == 2
    assert sock.copy_version == 1

    again = await hub.submit(CODE, commands.intent_for(parse_message(bot), sock, hub.settings))

    assert again["type"] == "ack"
    assert sock.copy_version == 2
    assert len(sock.copy["players"]) == 2


async def test_a_process_given_up_by_the_others_connects_its_players_again_on_the_stored_room(hubs):
    """A Redis failover can stop every process's heartbeat for longer than ``NODE_TTL_MS``: the
    first to beat again sweeps the others (their players marked disconnected, in a commit no
    message carries to them, since nobody is connected elsewhere any more). A swept process
    then claims its sockets again (``reclaimed``): judged against its cached room, where its
    players are still connected, that changed nothing, and they stayed disconnected in Redis
    (replaced by bots after the grace, while still at the table) and their sockets behind."""
    here, elsewhere = hubs
    room, host, token = lobby.new_room(CODE, "host", {}, 0)
    room.version = 1
    await here.store.commit(CODE, None, 1, orjson.dumps(room))
    sock = ClientSocket(host)
    hello = commands.command("hello", sock, token_hash(token), here.sockets, here.node_id)
    assert (await here.submit(CODE, hello))["type"] == "ack"
    assert sock.copy_version == 2 and sock.copy["players"][0]["connected"]
    assert (await elsewhere.submit(CODE, commands.command("node_lost", here.node_id)))["type"] == "ack"
    assert not Room.from_dict((await here.store.load(CODE))[1]).seats[0].connected

    answer = await here.submit(CODE, commands.command("reclaimed", host, here.node_id))

    assert answer["type"] == "ack"
    stored, document = await here.store.load(CODE)
    seat = Room.from_dict(document).seats[0]
    assert seat.connected and seat.node == here.node_id
    assert sock.copy_version == stored == 4
    assert sock.copy["players"][0]["connected"]
