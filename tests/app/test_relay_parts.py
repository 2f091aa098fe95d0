"""The relay's parts in one process: its message format and numbering (app/transport/relay.py), and the
publisher under it (app/storage/publisher.py) against the real Redis and a Redis that refuses
``CLIENT REPLY``."""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace
from typing import Any

import hiredis
import orjson
import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from app.core.metrics import Metrics
from app.storage.publisher import Publisher
from app.transport.relay import Relay
from app.transport.relay_wire import (
    BATCH,
    BINARY,
    TEXT,
    Link,
    RelayedSocket,
    client_record,
    gone_record,
    key_bytes,
)

from .harness import REAL_REDIS, free_port, real_redis_available


class FakeConn:
    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.answers: list[str] = []
        self.closed_with: int | None = None

    def send(self, text: str) -> None:
        self.answers.append(text)

    def send_frames(self, frames: list[bytes]) -> None:
        self.frames.extend(frames)

    def close(self, code: int) -> None:
        self.closed_with = code


def relay_named(origin: str) -> Relay:
    store = SimpleNamespace(node_channel=lambda node: f"t:node:{node}", shards=None)
    parts = SimpleNamespace(rooms=SimpleNamespace(node_id=origin), store=store, metrics=Metrics(),
                            settings=SimpleNamespace(redis_url="redis://127.0.0.1:1/0", node_ttl_ms=15_000))
    return Relay(parts)  # type: ignore[arg-type]


def wire(sender: Relay, receiver: Relay) -> list[bytes]:
    """What ``sender`` sends goes to ``receiver`` (and is kept, in order)."""
    sent: list[bytes] = []

    def send(node: str, kind: bytes, body: bytes, failed: Any = None) -> bool:
        message = sender.post.header(node, kind) + body
        sent.append(message)
        receiver.on_message(message)
        return True

    sender.post.send = send  # type: ignore[method-assign]
    sender.post.publisher = SimpleNamespace(ready=True)  # type: ignore[assignment]
    return sent


async def test_a_batch_carries_each_sockets_frames_and_closes_in_order():
    home, edge = relay_named("home1"), relay_named("edge1")
    sent = wire(home, edge)
    ann, bob = FakeConn(), FakeConn()
    edge.links["edge1.1"] = Link(ann, "home1")  # type: ignore[arg-type]
    edge.links["edge1.2"] = Link(bob, "home1")  # type: ignore[arg-type]
    big = b"x" * 70_000  # past a 16-bit length
    home.send_frames("edge1", "edge1.1", [b'{"type":"patch"}', "é" * 3])
    home.send_frames("edge1", "edge1.2", [big])
    home.send_frames("edge1", "edge1.1", [b""])
    home.send_close("edge1", "edge1.2", 4409)
    home.send_frames("edge1", "edge1.9", [b"nobody"])  # a socket gone meanwhile: dropped
    home.post.flush()
    assert len(sent) == 1 and sent[0][:1] == BATCH  # one message for the loop turn's frames
    assert ann.frames == [b'{"type":"patch"}', "é".encode() * 3, b""]
    assert bob.frames == [big] and bob.closed_with == 4409
    assert edge.links["edge1.2"].closed_by_home and not edge.links["edge1.1"].closed_by_home


def client_frame(relay: Relay, home: str, key: str, link: Link, payload: bytes, kind: int = TEXT) -> None:
    relay.post.relay_frame(home, link, payload, client_record(kind, key_bytes(key), payload))


async def test_a_turns_client_frames_and_the_homes_frames_to_one_process_go_in_one_message():
    """Each process is home to some rooms and relays sockets of others: what it has for
    another process in one turn of its loop goes in one batch, whichever way it goes."""
    here, there = relay_named("here4"), relay_named("there4")
    sent = wire(here, there)
    ann, bob, cat = FakeConn(), FakeConn(), FakeConn()
    ann_link, bob_link = Link(ann, "there4"), Link(bob, "there4")  # type: ignore[arg-type]
    ann_session = RelayedSocket(there, "here4", "here4.1", "ABCDEF", "1.2.3.4", {})
    bob_session = RelayedSocket(there, "here4", "here4.2", "ABCDEF", "1.2.3.5", {})
    there.relayed.update({"here4.1": ann_session, "here4.2": bob_session})
    there.links["there4.9"] = Link(cat, "here4")  # type: ignore[arg-type]  # relayed the other way
    client_frame(here, "there4", "here4.1", ann_link, b'{"type":"hello","token":"abcdefgh"}')
    client_frame(here, "there4", "here4.2", bob_link, b"\x00\xff", kind=BINARY)
    here.send_frames("there4", "there4.9", [b'{"type":"patch"}'])
    client_frame(here, "there4", "here4.1", ann_link, "é".encode())
    here.post.socket_gone("there4", gone_record(key_bytes("here4.1")))
    here.post.flush()
    assert len(sent) == 1 and sent[0][:1] == BATCH
    assert cat.frames == [b'{"type":"patch"}']
    assert [await ann_session.receive() for _ in range(3)] == [
        {"type": "websocket.receive", "text": '{"type":"hello","token":"abcdefgh"}'},
        {"type": "websocket.receive", "text": "é"},
        {"type": "websocket.disconnect", "code": 1000}]
    assert await bob_session.receive() == {"type": "websocket.receive", "bytes": b"\x00\xff"}


async def test_client_frames_lost_under_a_dropped_connection_close_their_sockets():
    """Their fate is unknown (the home may have applied them): the clients reconnect and retry
    with the same ids, which the home answers from its record."""
    edge = relay_named("edge5")
    failures: list[Any] = []
    edge.post.send = lambda node, kind, body, failed=None: failures.append(failed) or True  # type: ignore[method-assign]
    edge.post.publisher = SimpleNamespace(ready=True)  # type: ignore[assignment]
    ann, bob = FakeConn(), FakeConn()
    ann_link, bob_link = (Link(c, "home5") for c in (ann, bob))  # type: ignore[arg-type]
    client_frame(edge, "home5", "edge5.1", ann_link, b'{"type":"draw","id":"a1"}')
    client_frame(edge, "home5", "edge5.2", bob_link, b'{"type":"pass","id":"b1"}')
    edge.post.socket_gone("home5", gone_record(key_bytes("edge5.3")))  # (nothing to retry)
    edge.post.flush()
    assert len(failures) == 1 and failures[0] is not None
    failures[0](RedisConnectionError("lost"))
    assert ann.closed_with == bob.closed_with == 1012


async def test_client_frames_caught_by_a_drop_before_their_batch_went_out_are_answered_here():
    edge = relay_named("edge6")
    edge.post.publisher = SimpleNamespace(ready=True, connect_soon=lambda: None)  # type: ignore[assignment]
    new, playing = FakeConn(), FakeConn()
    new_link, playing_link = (Link(c, "home6") for c in (new, playing))  # type: ignore[arg-type]
    playing_link.sent = 3
    client_frame(edge, "home6", "edge6.1", new_link, b'{"type":"hello","token":"abcdefgh"}')
    client_frame(edge, "home6", "edge6.2", playing_link, b'{"type":"draw","id":"d7"}')
    client_frame(edge, "home6", "edge6.2", playing_link, b'{"type":"ping"}')
    edge.post.socket_gone("home6", gone_record(key_bytes("edge6.3")))
    edge.post.publisher.ready = False  # the connection went down after they were queued
    edge.post.flush()
    assert new.closed_with == 1013  # its hello never went: it tries again later
    assert [orjson.loads(a) for a in playing.answers] == [
        {"type": "error", "id": "d7", "code": "unavailable", "message": "unavailable, try again"},
        {"type": "pong"}]
    assert playing.closed_with is None
    assert edge.post.gone_later == [("home6", gone_record(key_bytes("edge6.3")))]  # sent once it is back
    assert edge.post.to_home == {}


async def test_a_gap_in_a_senders_numbers_closes_the_sockets_relayed_with_it():
    home, edge, other = relay_named("home2"), relay_named("edge2"), relay_named("other")
    wire(home, edge)
    near, far = FakeConn(), FakeConn()
    edge.links["edge2.1"] = Link(near, "home2")  # type: ignore[arg-type]
    edge.links["edge2.2"] = Link(far, "other")  # type: ignore[arg-type]
    relayed = RelayedSocket(edge, "home2", "home2.7", "ABCDEF", "1.2.3.4", {})
    edge.relayed["home2.7"] = relayed  # (relayed both ways between the same two processes)
    assert other is not None
    home.send_frames("edge2", "edge2.1", [b"a"])
    home.post.flush()
    home.send_frames("edge2", "edge2.1", [b"b"])
    home.post.flush()
    assert near.frames == [b"a", b"b"] and near.closed_with is None
    home.post.next_out["edge2"] += 1  # a message lost on the way
    home.send_frames("edge2", "edge2.1", [b"d"])
    home.post.flush()
    assert near.closed_with == 1012  # the client reconnects and gets the whole view
    assert far.closed_with is None  # relayed to another home: untouched
    assert (await relayed.receive())["type"] == "websocket.disconnect"
    # the count goes on from there
    home.send_frames("edge2", "edge2.1", [b"e"])
    home.post.flush()
    assert edge.post.in_order("home2", home.post.next_out["edge2"]) is True


def fake_redis(answer: Any, drop_first: bool = False):
    """A TCP server that answers each RESP command with ``answer(command)`` (the first
    connection dropped at once with ``drop_first``)."""
    accepted = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        if drop_first and accepted == 1:
            writer.transport.abort()
            return
        parser = hiredis.Reader()
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                parser.feed(data)
                while (command := parser.gets()) is not False:
                    writer.write(answer(command))

    return asyncio.start_server(serve, "127.0.0.1", 0)


def echo(command: list[bytes]) -> bytes | None:
    return b"$%d\r\n%b\r\n" % (len(command[1]), command[1]) if command[0] == b"ECHO" else None


@pytest.fixture
def real():
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    return REAL_REDIS


async def test_publishes_arrive_in_order_with_or_without_a_reply(real):
    listener = aioredis.from_url(real)
    pubsub = listener.pubsub()
    await pubsub.subscribe("t:relay-order")
    publisher = Publisher(real)
    assert await publisher.until_ready()
    counts: list[int | Exception] = []
    for i in range(200):
        if i % 3 == 0:
            publisher.publish("t:relay-order", b"%d" % i, counts.append)
        else:
            publisher.publish("t:relay-order", b"%d" % i, None, reply=False)
    assert await publisher.published("t:relay-order", b"last") == 1
    assert counts == [1] * 67  # every reply asked for, and only those
    got = []
    deadline = asyncio.get_running_loop().time() + 10
    while len(got) < 201 and asyncio.get_running_loop().time() < deadline:
        # (None for the subscription's own confirmation)
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1)
        if message is not None:
            got.append(message["data"])
    assert got == [b"%d" % i for i in range(200)] + [b"last"]
    assert await publisher.published("t:relay-nobody", b"x") == 0
    assert publisher.skips  # this Redis honours CLIENT REPLY SKIP (the probe found it)
    publisher.close()
    await pubsub.aclose()
    await listener.aclose()


async def test_an_unreachable_redis_answers_every_publish_with_an_error():
    publisher = Publisher(f"redis://127.0.0.1:{free_port()}/0")
    results: list[int | Exception] = []
    publisher.publish("t:x", b"1", results.append)
    with pytest.raises(RedisConnectionError):
        await publisher.published("t:x", b"2")
    assert len(results) == 1 and isinstance(results[0], RedisConnectionError)
    assert not await publisher.until_ready()


async def test_a_redis_that_refuses_client_reply_gets_publishes_with_replies():
    """A managed Redis may refuse CLIENT: the probe on each new connection finds out, and every
    publish asks for its reply there."""
    commands: list[list[bytes]] = []

    def answer(command: list[bytes]) -> bytes:
        commands.append(command)
        if command[0] == b"CLIENT":
            return b"-ERR unknown command 'CLIENT'\r\n"
        return echo(command) or b":1\r\n"

    server = await fake_redis(answer)
    port = server.sockets[0].getsockname()[1]
    publisher = Publisher(f"redis://127.0.0.1:{port}/0")
    assert await publisher.until_ready()
    counts: list[int | Exception] = []
    publisher.publish("t:x", b"early", counts.append)  # sent before the probe's answer
    assert await publisher.published("t:x", b"probed") == 1
    assert publisher.skips is False
    publisher.publish("t:x", b"no reply wanted", None, reply=False)
    assert await publisher.published("t:x", b"last") == 1
    assert counts == [1]
    # no CLIENT REPLY SKIP after the probe: the replies still pair with their publishes
    assert [c[0] for c in commands].count(b"CLIENT") == 1
    published = [c[2] for c in commands if c[0] == b"PUBLISH"]
    assert published == [b"early", b"probed", b"no reply wanted", b"last"]
    publisher.close()
    server.close()
    await server.wait_closed()


async def test_what_is_known_of_processes_no_longer_relayed_with_is_forgotten():
    relay = relay_named("here")
    relay.links["here.1"] = Link(FakeConn(), "busy")  # type: ignore[arg-type]
    for node in ("busy", "old", "recent"):
        relay.post.next_in[node] = relay.post.next_out[node] = 7
    relay._heard.update({"busy": 0.0, "old": 0.0, "recent": 1000.0})
    relay._forget_idle(now=1100.0)
    # in use, or heard of lately
    assert set(relay.post.next_in) == set(relay.post.next_out) == {"busy", "recent"}
    relay._forget_idle(now=1400.0)
    assert set(relay.post.next_in) == {"busy"}


async def test_a_connection_lost_as_it_opens_fails_its_publishes_and_the_next_pairs_right():
    """Replies pair with the commands of their own connection only."""
    def answer(command: list[bytes]) -> bytes:
        if command[0] == b"PUBLISH":
            return b":%d\r\n" % len(command[2])  # the payload's length
        return echo(command) or b"+OK\r\n"

    server = await fake_redis(answer, drop_first=True)  # the first connection is dropped at once
    port = server.sockets[0].getsockname()[1]
    publisher = Publisher(f"redis://127.0.0.1:{port}/0")
    with pytest.raises(RedisConnectionError):
        await publisher.published("t:x", b"1")
    # (a failed attempt is not repeated for RETRY_AFTER_S; this one found the connection open)
    publisher._failed_at = -1e9
    assert await publisher.published("t:x", b"22") == 2
    assert await publisher.published("t:x", b"333") == 3
    publisher.close()
    server.close()
    await server.wait_closed()


async def test_a_socket_closed_while_the_relay_was_down_is_reported_once_it_is_back():
    home, edge = relay_named("home3"), relay_named("edge3")
    wire(edge, home)
    session = RelayedSocket(home, "edge3", "edge3.4", "ABCDEF", "1.2.3.4", {})
    home.relayed["edge3.4"] = session
    edge.post.gone_later.append(("home3", gone_record(key_bytes("edge3.4"))))
    edge.post.flush()
    assert (await session.receive())["type"] == "websocket.disconnect"
    assert edge.post.gone_later == []
