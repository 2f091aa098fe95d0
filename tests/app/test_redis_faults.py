"""Redis faults: a dedicated redis-server with AOF, started and stopped by this test by its pid.
While Redis is down actions get ``unavailable`` and sockets stay up; after a restart the room
(kept by the AOF) plays on from its last version."""

from __future__ import annotations

from .harness import Client, RedisServer, ServerProcess


async def test_redis_down_gives_unavailable_and_an_aof_restart_keeps_the_room(tmp_path):
    store = RedisServer(tmp_path).start()
    server = ServerProcess(redis="fake")
    server.env["REDIS_URL"] = f"redis://127.0.0.1:{store.port}/0"  # this test's own Redis
    try:
        server.start()
        host = server.create("Ann")
        code = host["code"]
        ann = await Client(server, code, host["token"]).connect()
        assert (await ann.send({"type": "add_bot", "level": "easy"}))["type"] == "ack"
        version = ann.version
        store.stop()  # Redis goes away (kill -9)
        answer = await ann.send({"type": "add_bot", "level": "easy"})
        assert answer["type"] == "error" and answer["code"] == "unavailable", answer
        await ann.ws.send('{"type": "ping"}')
        pong = await ann.until(lambda m: m["type"] == "pong")  # the socket stayed up
        assert pong and ann.version == version
        store.start()  # same directory: the AOF brings the room back
        answer = await ann.send({"type": "add_bot", "level": "easy"})
        assert answer["type"] == "ack", answer
        await ann.until_view(lambda v: len(v["players"]) == 3)
        assert ann.version == version + 1 and ann.gaps == 0
        assert (await ann.send({"type": "start"}))["type"] == "ack"
        await ann.until_view(lambda v: v["room"]["status"] == "playing")
        await ann.close()
    finally:
        err = server.stop()
        store.stop()
    assert "Traceback" not in err, err[-3000:]
