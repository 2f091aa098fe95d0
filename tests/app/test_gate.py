"""The parts of the limits, on a clock of the test's own: the gate every frame passes
(app/transport/gate.py), the token bucket and the per-address limits (app/processes/limits.py),
the origin check (app/transport/session.py)."""

from __future__ import annotations

import fakeredis
import pytest

from app.core.settings import Settings
from app.processes.limits import AddressLimits, TokenBucket
from app.storage.store import RoomStore
from app.transport.gate import Gate, Verdict, is_ping
from app.transport.session import origin_allowed


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_ping_is_told_without_parsing_and_nothing_else_is_one():
    for frame in ('{"type":"ping"}', '{"type": "ping"}', ' {\n"type" :\t"ping" } ', b'{"type":"ping"}'):
        assert is_ping(frame), frame
    for frame in ('{"type":"pong"}', '{"type":"ping","id":"x"}', '{"type":"ping"', "ping", "",
                  '{"type":"ping"}' + " " * 60, '{"type":"p\\u0069ng"}', b"\xff"):
        assert not is_ping(frame), frame


def test_a_bucket_refills_with_its_clock():
    clock = Clock()
    bucket = TokenBucket(2, 4.0, clock)
    assert [bucket.take() for _ in range(3)] == [True, True, False]
    clock.now += 0.25  # one token back
    assert [bucket.take() for _ in range(2)] == [True, False]
    clock.now += 10
    assert bucket.full() and bucket.tokens < 2  # (filled when next taken from)


def test_past_the_limit_a_frame_costs_a_counter_one_notice_a_window_and_a_flood_is_called():
    clock = Clock()
    gate = Gate(TokenBucket(3, 1.0, clock), TokenBucket(2, 1.0, clock), window_s=1.0, flood_frames=10,
                clock=clock)
    assert [gate.admit("{}") for _ in range(3)] == [Verdict.MESSAGE] * 3
    assert [gate.admit('{"type":"ping"}') for _ in range(3)] == [Verdict.PING, Verdict.PING, Verdict.DROP]
    # the first message past the limit in the window gets the notice (a ping past its own does not)
    assert [gate.admit(b"\xff") for _ in range(3)] == [Verdict.NOTICE, Verdict.DROP, Verdict.DROP]
    assert gate.over == 4
    clock.now += 1.0  # a new window: one token back for each kind, a notice again
    assert [gate.admit("x"), gate.admit('{"type":"ping"}')] == [Verdict.MESSAGE, Verdict.PING]
    assert [gate.admit("x") for _ in range(10)] == [Verdict.NOTICE] + [Verdict.DROP] * 8 + [Verdict.FLOOD]
    # a player who clicks fast still gets pongs: the pings' allowance is their own
    clock.now += 1.0
    assert gate.admit('{"type": "ping"}') is Verdict.PING


class NoRedis:
    def __getattr__(self, name: str):
        raise AssertionError(f"Redis asked ({name}) for a block this process knows")


async def test_a_blocked_address_is_known_here_until_its_block_ends():
    clock = Clock()
    redis = fakeredis.FakeAsyncRedis()
    store = RoomStore(redis, "t", 60_000)
    limits = AddressLimits(store, Settings(failed_joins_per_min=3, flood_block_s=30), clock)
    for _ in range(2):
        await limits.join_failed("1.2.3.4")
        assert await limits.admit("1.2.3.4")
    await limits.join_failed("1.2.3.4")
    store.redis = NoRedis()  # type: ignore[assignment]
    assert not await limits.admit("1.2.3.4")
    assert await limits.joins_blocked("1.2.3.4")
    store.redis = redis
    assert await limits.admit("5.6.7.8")
    # another process (its own limits, the same Redis) learns of the block with one look-up
    other = AddressLimits(store, Settings(failed_joins_per_min=3, flood_block_s=30), clock)
    assert not await other.admit("1.2.3.4")
    store.redis = NoRedis()  # type: ignore[assignment]
    assert not await other.admit("1.2.3.4")
    clock.now += 61
    assert not other.blocked_here("1.2.3.4")
    # a flood blocks for flood_block_s, on every process
    store.redis = redis
    await limits.flooded("9.9.9.9")
    assert not await other.admit("9.9.9.9") and not await limits.admit("9.9.9.9")
    await redis.aclose()


async def test_hellos_are_counted_per_token_and_per_address():
    store = RoomStore(fakeredis.FakeAsyncRedis(), "t", 60_000)
    limits = AddressLimits(store, Settings(hellos_per_token_per_min=2, hellos_per_ip_per_min=3))
    assert [await limits.hello_allowed("1.1.1.1", "a") for _ in range(3)] == [True, True, False]
    assert not await limits.hello_allowed("1.1.1.1", "b")  # the address's fourth
    assert await limits.hello_allowed("2.2.2.2", "b")


def test_a_players_sockets_share_one_bucket_and_full_ones_are_forgotten():
    clock = Clock()
    limits = AddressLimits(RoomStore(fakeredis.FakeAsyncRedis(), "t", 60_000), Settings(), clock)
    first = limits.bucket("ROOM:p1", 5, 1.0, clock)
    assert limits.bucket("ROOM:p1", 5, 1.0) is first and limits.bucket("ROOM:p2", 5, 1.0) is not first
    first.take()
    clock.now += 10
    for i in range(2000):
        limits.bucket(f"ROOM:x{i}", 5, 1.0, clock)
    assert len(limits.buckets) < 2000  # full buckets are swept (one is as good as a new one)


class FakeSocket:
    def __init__(self, origin: str | None, host: str, scheme: str = "ws") -> None:
        headers = [(b"host", host.encode())]
        if origin is not None:
            headers.append((b"origin", origin.encode()))
        self.scope = {"type": "websocket", "scheme": scheme, "headers": headers}

    @property
    def headers(self):
        from starlette.datastructures import Headers

        return Headers(scope=self.scope)


@pytest.mark.parametrize(("origin", "host", "scheme", "allowed"), [
    (None, "example.com", "ws", True),  # not a browser
    ("http://example.com", "example.com", "ws", True),
    ("http://example.com:80", "example.com", "ws", True),
    ("http://EXAMPLE.com/", "example.com:80", "ws", True),
    ("https://example.com", "example.com", "ws", False),  # the page is http
    ("https://example.com", "example.com", "wss", True),  # TLS (or X-Forwarded-Proto: https)
    ("https://example.com:443", "example.com", "wss", True),
    ("http://example.com", "example.com", "wss", False),
    ("https://example.com:8443", "example.com", "wss", False),
    ("http://example.com.evil", "example.com", "ws", False),
    ("http://[::1]:8000", "[::1]:8000", "ws", True),
    ("null", "example.com", "ws", False),
    ("http://example.com:bad", "example.com", "ws", False),
    ("file://", "example.com", "ws", False),
])
def test_the_origin_is_the_pages_scheme_host_and_port(origin, host, scheme, allowed):
    assert origin_allowed(FakeSocket(origin, host, scheme), []) is allowed  # type: ignore[arg-type]


def test_listed_origins_are_allowed_as_written_or_as_the_same_site():
    ws = FakeSocket("https://friends.example", "game.example", "wss")
    assert origin_allowed(ws, ["https://friends.example"])  # type: ignore[arg-type]
    assert origin_allowed(ws, ["https://friends.example:443/"])  # type: ignore[arg-type]
    assert not origin_allowed(ws, ["http://friends.example"])  # type: ignore[arg-type]
    assert origin_allowed(ws, ["*"])  # type: ignore[arg-type]
