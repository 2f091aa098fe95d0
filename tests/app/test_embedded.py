"""The embedded store outlives its process: its journal replays every acknowledged write after
a clean stop or a kill, and a record cut short by a crash is left out. Black-box: the default
server (no REDIS_URL) stopped mid-round with SIGTERM, then with SIGKILL, started again on the
same journal; every player says hello again and finds the room as they last saw it."""

from __future__ import annotations

import asyncio
import contextlib
import signal

import fakeredis
import pytest

from app.storage.embedded import commands_in, open_embedded

from .harness import Client, ServerProcess
from .tables import level, ok, started


def test_only_commands_that_may_write_are_kept():
    packed = (b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n" b"*3\r\n$3\r\nset\r\n$1\r\na\r\n$1\r\n1\r\n"
              b"*2\r\n$4\r\nPTTL\r\n$1\r\na\r\n" b"*4\r\n$4\r\nHSET\r\n$1\r\nh\r\n$1\r\nf\r\n$1\r\nv\r\n")
    assert commands_in(packed) == [b"*3\r\n$3\r\nset\r\n$1\r\na\r\n$1\r\n1\r\n",
                                   b"*4\r\n$4\r\nHSET\r\n$1\r\nh\r\n$1\r\nf\r\n$1\r\nv\r\n"]


async def _write_some(path) -> None:
    redis, journal, _ = open_embedded(str(path))
    assert journal is not None
    journal.start(asyncio.get_running_loop())
    await redis.set("room", b"v1")
    await redis.hset("answers", mapping={"p1:m1": b"ack"})
    await redis.rpush("steps", b"s1", b"s2")
    async with redis.pipeline(transaction=True) as pipe:
        pipe.set("room", b"v2")
        pipe.pexpire("room", 600_000)
        await pipe.execute()
    script = redis.register_script("return redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])")
    await script(keys=["deadlines"], args=[5, "ROOM"])
    # no close: as a killed process, whose last writes are in the file and nothing more


async def test_a_killed_process_loses_nothing_it_acknowledged(tmp_path):
    path = tmp_path / "rooms.aof"
    await _write_some(path)
    redis, _, _ = open_embedded(str(path))
    assert await redis.get("room") == b"v2" and 0 < await redis.pttl("room") <= 600_000
    assert await redis.hgetall("answers") == {b"p1:m1": b"ack"}
    assert await redis.lrange("steps", 0, -1) == [b"s1", b"s2"]
    assert await redis.zrange("deadlines", 0, -1, withscores=True) == [(b"ROOM", 5.0)]
    # replayed, then rewritten as one RESTORE per key
    assert path.read_bytes().count(b"RESTORE") == 4


async def test_a_record_cut_short_by_a_crash_is_left_out(tmp_path):
    path = tmp_path / "rooms.aof"
    await _write_some(path)
    with open(path, "ab") as journal_file:
        journal_file.write(b"*3\r\n$3\r\nSET\r\n$4\r\nroom\r\n$2\r\nv")  # the write a crash cut
    redis, _, _ = open_embedded(str(path))
    assert await redis.get("room") == b"v2"


async def test_a_clean_stop_rewrites_the_journal_as_the_store_is(tmp_path):
    path = tmp_path / "rooms.aof"
    redis, journal, server = open_embedded(str(path))
    assert journal is not None
    journal.start(asyncio.get_running_loop())
    for n in range(50):
        await redis.set("counter", n)
    await redis.delete("counter")
    await redis.set("kept", b"yes")
    await journal.close(server)
    assert path.read_bytes().count(b"RESTORE") == 1 and b"counter" not in path.read_bytes()
    again, _, _ = open_embedded(str(path))
    assert await again.get("kept") == b"yes" and await again.exists("counter") == 0


def test_without_a_path_the_store_is_in_memory_only():
    _, journal, server = open_embedded("")
    assert journal is None and isinstance(server, fakeredis.FakeServer)


def _unpresenced(view: dict) -> dict:
    players = [{k: v for k, v in p.items() if k != "connected"} for p in view["players"]]
    return {**view, "players": players}


def _restart(server: ServerProcess) -> ServerProcess:
    """The same server (settings, journal, database, port) started again."""
    again = ServerProcess()
    again.env, again.port, again.url, again.ws_url = server.env, server.port, server.url, server.ws_url
    return again.start()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["stopped", "killed"])
async def test_the_default_server_restarted_mid_round_keeps_every_room(how):
    server = ServerProcess().start()  # the embedded store: no REDIS_URL
    try:
        ann, bob, cat = await started(server, ["Ann", "Bob", "Cat"],
                                      {"deck": {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20},
                                       "turn_timer_s": 0, "catch_window_s": 30})
        for player in (ann, bob, cat, ann):  # half a round: every move acknowledged
            await ok(player, {"type": "play", "card": player.view["hand"][0]})
        await level([ann, bob, cat])
        seen = {c.you: (c.version, c.view) for c in (ann, bob, cat)}
        err = server.stop(how)
        if how == signal.SIGTERM:
            assert "Traceback" not in err, err[-3000:]
        server = _restart(server)
        for old in (ann, bob, cat):
            back = await Client(server, old.code, old.token).connect()
            version, view = seen[old.you]
            # the same room; only who is connected changed (the drop and the hello since)
            assert back.version > version and _unpresenced(back.view) == _unpresenced(view)
            await back.close()
        # and the game goes on where it was
        bob2 = await Client(server, ann.code, bob.token).connect()
        assert bob2.view["game"]["turn"] == bob.you
        await ok(bob2, {"type": "play", "card": bob2.view["hand"][0]})
        await bob2.close()
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]


async def test_a_command_cancelled_while_its_record_is_written_leaves_no_reply_behind(tmp_path):
    """A stop cancels the room actors: a command cancelled while it waited for the journal left
    its reply on the pooled connection, and the next command read it (hmget answered 1)."""
    redis, journal, server = open_embedded(str(tmp_path / "rooms.aof"))
    assert journal is not None
    journal.start(asyncio.get_running_loop())
    await redis.hset("h", mapping={"f": b"v"})
    for turns in range(12):  # the cancel lands somewhere on the way, once while it is written
        task = asyncio.create_task(redis.incr("counter"))
        for _ in range(turns):
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert await redis.hmget("h", ["f"]) == [b"v"]
    await journal.close(server)
