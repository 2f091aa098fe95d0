"""GroupCommit: commands queued in the same moment share one pipeline, each caller gets its
own results, and failures reach exactly the callers they concern."""

from __future__ import annotations

import asyncio

import fakeredis
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from app.storage.batch import GroupCommit


def run(coro):
    return asyncio.run(coro)


def test_concurrent_commands_share_one_pipeline_and_keep_their_own_results():
    async def main():
        redis = fakeredis.FakeAsyncRedis()
        group = GroupCommit(redis)
        results = await asyncio.gather(*[
            group.execute(("SET", f"k{i}", i), ("INCR", f"k{i}")) for i in range(20)])
        assert group.batches == 1 and group.commands == 40
        assert [r[1] for r in results] == [i + 1 for i in range(20)]
        assert [int(await redis.get(f"k{i}")) for i in range(20)] == [i + 1 for i in range(20)]
        # one caller alone gets a batch of its own
        assert await group.execute(("GET", "k3")) == [b"4"]
        assert group.batches == 2
    run(main())


def test_commands_queued_while_a_batch_is_in_flight_go_in_the_next_one():
    async def main():
        redis = fakeredis.FakeAsyncRedis()
        group = GroupCommit(redis, max_batch=4)
        results = await asyncio.gather(*[group.execute(("INCR", "n")) for _ in range(10)])
        assert sorted(r[0] for r in results) == list(range(1, 11))
        assert group.batches == 3  # 4 + 4 + 2
    run(main())


def test_a_failing_command_fails_only_its_caller():
    async def main():
        redis = fakeredis.FakeAsyncRedis()
        await redis.set("text", "x")
        group = GroupCommit(redis)
        bad, good = await asyncio.gather(group.execute(("INCR", "text")), group.execute(("INCR", "n")))
        assert isinstance(bad[0], ResponseError)
        assert good == [1]
    run(main())


class _Down:
    """A client whose connection is gone."""

    def pipeline(self, transaction=False):
        return _DownPipe()


class _DownPipe:
    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False

    def execute_command(self, *args):
        return self

    async def execute(self, raise_on_error=True):
        raise RedisConnectionError("connection refused")


def test_a_lost_connection_raises_to_every_caller_of_the_batch_and_the_group_recovers():
    async def main():
        group = GroupCommit(_Down())  # type: ignore[arg-type]
        outcomes = await asyncio.gather(group.execute(("INCR", "a")), group.execute(("INCR", "b")),
                                        return_exceptions=True)
        assert all(isinstance(o, RedisConnectionError) for o in outcomes)
        group._redis = fakeredis.FakeAsyncRedis()  # the connection is back
        assert await group.execute(("INCR", "a")) == [1]
    run(main())


def test_a_cancelled_caller_does_not_disturb_the_others():
    async def main():
        redis = fakeredis.FakeAsyncRedis()
        group = GroupCommit(redis)
        doomed = asyncio.create_task(group.execute(("INCR", "x")))
        kept = asyncio.create_task(group.execute(("INCR", "y")))
        await asyncio.sleep(0)  # both queued; the batch has not been sent yet
        doomed.cancel()
        assert await kept == [1]
        with pytest.raises(asyncio.CancelledError):
            await doomed
    run(main())
