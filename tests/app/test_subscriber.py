"""The hub's pub/sub reader against a redis-server of the test's own: confirmed subscriptions,
messages in order, reconnection after Redis restarts (with a catch-up call), AUTH."""

from __future__ import annotations

import asyncio
import contextlib

import redis.asyncio as aioredis

from app.storage.subscriber import Subscriber

WAIT = 10.0


class Inbox:
    def __init__(self) -> None:
        self.messages: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue()
        self.reconnects = asyncio.Queue[None]()

    def on_message(self, channel: bytes, data: bytes) -> None:
        self.messages.put_nowait((channel, data))

    def on_reconnect(self) -> None:
        self.reconnects.put_nowait(None)

    async def next(self) -> tuple[bytes, bytes]:
        return await asyncio.wait_for(self.messages.get(), WAIT)


@contextlib.asynccontextmanager
async def listening(url: str, inbox: Inbox):
    sub = Subscriber(url, inbox.on_message, inbox.on_reconnect)
    task = asyncio.create_task(sub.run())
    try:
        await asyncio.wait_for(sub.connected.wait(), WAIT)
        yield sub
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _subscribed(client: aioredis.Redis, channel: str) -> int:
    return (await client.pubsub_numsub(channel))[0][1]


async def test_messages_arrive_in_order_once_the_subscription_is_confirmed(own_redis):
    server = own_redis
    url = server.url
    client = aioredis.Redis.from_url(url)
    inbox = Inbox()
    async with listening(url, inbox) as sub:
        await sub.subscribe("m:{ROOM}")
        assert await _subscribed(client, "m:{ROOM}") == 1  # confirmed before it returned
        for i in range(200):
            await client.publish("m:{ROOM}", b"x" * (i * 50))  # some span several reads
        await client.publish("m:{OTHER}", b"not ours")
        for i in range(200):
            assert await inbox.next() == (b"m:{ROOM}", b"x" * (i * 50))
        await sub.unsubscribe("m:{ROOM}")
        await sub.subscribe("m:{NEXT}")  # answered after the unsubscribe, in order
        assert await _subscribed(client, "m:{ROOM}") == 0
        await client.publish("m:{ROOM}", b"gone")
        await client.publish("m:{NEXT}", b"here")
        assert await inbox.next() == (b"m:{NEXT}", b"here")
    await client.aclose()


async def test_after_redis_restarts_it_subscribes_again_and_asks_for_a_catch_up(own_redis):
    server = own_redis
    url = server.url
    inbox = Inbox()
    async with listening(url, inbox) as sub:
        await sub.subscribe("m:{ROOM}")
        server.stop()
        # while Redis is down a subscription is refused at once (the hub catches up later)
        await asyncio.wait_for(sub.disconnected.wait(), WAIT)
        try:
            await sub.subscribe("m:{LATE}")
            raise AssertionError("subscribed with Redis down")
        except ConnectionError:
            pass
        server.start()
        await asyncio.wait_for(inbox.reconnects.get(), WAIT)  # both channels confirmed again
        client = aioredis.Redis.from_url(url)
        assert await _subscribed(client, "m:{ROOM}") == 1
        assert await _subscribed(client, "m:{LATE}") == 1
        await client.publish("m:{LATE}", b"after")
        assert await inbox.next() == (b"m:{LATE}", b"after")
        await client.aclose()


async def test_a_password_in_the_url_is_sent(own_redis):
    server = own_redis
    admin = aioredis.Redis(port=server.port)
    await admin.config_set("requirepass", "s3cret")
    await admin.aclose()
    url = f"redis://:s3cret@127.0.0.1:{server.port}/0"
    client = aioredis.Redis.from_url(url)
    inbox = Inbox()
    async with listening(url, inbox) as sub:
        await sub.subscribe("m:{ROOM}")
        await client.publish("m:{ROOM}", b"hi")
        assert await inbox.next() == (b"m:{ROOM}", b"hi")
    await client.aclose()


