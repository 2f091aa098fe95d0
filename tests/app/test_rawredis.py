"""The plain-RESP connection the commits use, against a redis-server of the test's own."""

from __future__ import annotations

import asyncio

import pytest
import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError

from app.storage.batch import GroupCommit
from app.storage.rawredis import RawConnection, pack


def test_pack_spells_resp():
    assert pack("SET", b"k", 12, "é") == b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n12\r\n$2\r\n\xc3\xa9\r\n"
    assert pack("SET", "k", 1.5) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\n1.5\r\n"
    for wrong in (None, True, ["a"]):
        with pytest.raises(TypeError):
            pack("SET", "k", wrong)


async def test_a_batch_gets_its_replies_in_order_errors_as_values(own_redis):
    server = own_redis
    conn = RawConnection(f"redis://127.0.0.1:{server.port}/3")
    big = b"x" * 200_000  # a reply longer than one read
    replies = await conn.execute([("SET", "a", big), ("GET", "a"), ("INCR", "a"),
                                  ("EVALSHA", "0" * 40, 0), ("RPUSH", "l", 1, 2), ("LRANGE", "l", 0, -1)])
    assert replies[0] == b"OK" and replies[1] == big
    assert isinstance(replies[2], ResponseError) and isinstance(replies[3], NoScriptError)
    assert replies[4:] == [2, [b"1", b"2"]]
    assert redis.Redis(port=server.port, db=3).get("a") == big  # SELECT from the URL
    server.stop()
    with pytest.raises(RedisConnectionError):
        await conn.execute([("GET", "a")])
    server.start()  # AOF: the data is back, and so is the connection
    assert await conn.execute([("GET", "a")]) == [big]
    conn.close()


async def test_group_commit_over_the_raw_connection_with_a_password(own_redis):
    server = own_redis
    redis.Redis(port=server.port).config_set("requirepass", "s3cret")
    url = f"redis://:s3cret@127.0.0.1:{server.port}/0"
    group = GroupCommit(None, raw=RawConnection(url))  # type: ignore[arg-type]
    results = await asyncio.gather(*[group.execute(("INCR", "n"), ("GET", "n")) for _ in range(30)])
    assert group.batches == 1
    assert sorted(r[0] for r in results) == list(range(1, 31))
    wrong = RawConnection(f"redis://:nope@127.0.0.1:{server.port}/0")
    with pytest.raises(RedisConnectionError):
        await wrong.execute([("PING",)])

