"""Every per-address limit keys on the client's network (issue #43 point 3): 10,000 rooms were
made in 47 s, and room codes looked up 370 times a second, from the addresses of one IPv6 /64,
each of them new to limits that counted full addresses.

Black-box over HTTP and WebSockets against real server processes; a client's address is set
with ``X-Forwarded-For`` (uvicorn trusts it from 127.0.0.1). The harness lifts the limits: each
test sets the ones it tries.
"""

from __future__ import annotations

import contextlib

import httpx
import pytest
import websockets

from .harness import TIMEOUT, ServerProcess


@pytest.fixture
def servers():
    started: list[ServerProcess] = []

    def start(**settings) -> ServerProcess:
        started.append(ServerProcess(redis="fake", **settings).start())
        return started[-1]

    yield start
    errors = "".join(s.stop() for s in started)
    assert "Traceback" not in errors, errors[-3000:]


def create(server: ServerProcess, address: str) -> httpx.Response:
    return httpx.post(f"{server.url}/api/rooms", json={"name": "Mallory"},
                      headers={"X-Forwarded-For": address}, timeout=TIMEOUT)


def look_up(server: ServerProcess, code: str, address: str) -> httpx.Response:
    return httpx.get(f"{server.url}/api/rooms/{code}", headers={"X-Forwarded-For": address}, timeout=TIMEOUT)


def slowed(answer: httpx.Response) -> bool:
    """A 429 ``rate_limited`` that says when to come back."""
    if answer.status_code != 429:
        return False
    assert answer.json()["error"]["code"] == "rate_limited", answer.text
    assert 1 <= int(answer.headers["retry-after"]) <= 60, answer.headers
    return True


def test_room_creations_from_the_addresses_of_one_slash64_are_limited_together(servers):
    server = servers(rooms_per_min=5)
    flood = [f"2001:db8:1:1::{i:x}" for i in range(1, 9)] + ["2001:DB8:1:1:ffff:ffff:ffff:ffff"]
    answers = [create(server, address) for address in flood]
    assert [a.status_code for a in answers[:5]] == [201] * 5
    assert all(slowed(a) for a in answers[5:]), [a.status_code for a in answers]
    # the next /64 (another home) still creates
    assert create(server, "2001:db8:1:2::1").status_code == 201


def test_ipv4_counts_per_address_by_default_and_by_a_slash24_when_set(servers):
    default = servers(rooms_per_min=3)
    assert [create(default, "198.51.100.1").status_code for _ in range(3)] == [201] * 3
    assert slowed(create(default, "::ffff:198.51.100.1"))  # an IPv4-mapped address is the same one
    assert create(default, "198.51.100.2").status_code == 201  # the neighbour is another client
    wide = servers(rooms_per_min=3, limit_ipv4_prefix=24)
    assert [create(wide, f"198.51.100.{i}").status_code for i in (1, 2, 3)] == [201] * 3
    assert slowed(create(wide, "198.51.100.200"))
    assert slowed(create(wide, "::ffff:198.51.100.7"))
    assert create(wide, "198.51.101.1").status_code == 201


def test_room_look_ups_are_limited_per_network_and_failed_ones_still_count(servers):
    server = servers(lookups_per_min=5, failed_joins_per_min=3)
    code = create(server, "192.0.2.1").json()["code"]
    answers = [look_up(server, code, f"2001:db8:2:1::{i}") for i in range(1, 8)]
    assert [a.status_code for a in answers[:5]] == [200] * 5
    assert all(slowed(a) for a in answers[5:]), [a.status_code for a in answers]
    assert look_up(server, code, "2001:db8:2:2::1").status_code == 200
    # failed joins from rotating addresses of one /64 block that /64's look-ups and joins
    for i, missing in enumerate(("ZZZZZZ", "YYYYYY", "XXXXXX")):
        joined = httpx.post(f"{server.url}/api/rooms/{missing}/join", json={"name": "x"},
                            headers={"X-Forwarded-For": f"2001:db8:2:3::{i + 1}"}, timeout=TIMEOUT)
        assert joined.status_code == 404, joined.text
    assert look_up(server, code, "2001:db8:2:3:abcd::1").status_code == 429
    assert look_up(server, code, "2001:db8:2:4::1").status_code == 200


async def test_sockets_and_qr_codes_are_counted_per_network(servers):
    server = servers(sockets_per_ip=2, qr_per_min=2)
    code = create(server, "192.0.2.1").json()["code"]

    async def connect(address: str):
        return await websockets.connect(f"{server.ws_url}/ws/{code}",
                                        additional_headers={"X-Forwarded-For": address})

    opened = []
    try:
        opened += [await connect("2001:db8:3:1::1"), await connect("2001:db8:3:1::2")]
        with pytest.raises(websockets.InvalidStatus) as refused:
            opened.append(await connect("2001:db8:3:1::3"))
        assert refused.value.response.status_code == 403
        opened.append(await connect("2001:db8:3:2::1"))  # another network has its own sockets
    finally:
        for ws in opened:
            with contextlib.suppress(Exception):
                await ws.close()

    def qr(address: str) -> int:
        return httpx.get(f"{server.url}/api/qr.svg", params={"text": "http://x/r/ABCDEF"},
                         headers={"X-Forwarded-For": address}, timeout=TIMEOUT).status_code

    assert [qr(f"2001:db8:4:1::{i}") for i in (1, 2, 3)] == [200, 200, 429]
    assert qr("2001:db8:4:2::1") == 200


@pytest.mark.parametrize(("address", "key"), [
    ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
    ("2001:0DB8:0001:0002:0000:0000:0000:0009", "2001:db8:1:2::/64"),  # written out, upper case
    ("[2001:db8:1:2::9]", "2001:db8:1:2::/64"),  # bracketed, as in a URL
    ("fe80::1%eth0", "fe80::/64"),  # a zone names an interface, not a client
    ("::1", "::/64"),
    ("::ffff:198.51.100.7", "198.51.100.7"),  # IPv4-mapped: the IPv4 address
    ("::ffff:c633:6407", "198.51.100.7"),  # the same, in hex
    ("198.51.100.7", "198.51.100.7"),
    ("?", "?"),  # no client (the ASGI scope had none)
    ("", ""),
    ("not an address", "not an address"),
    ("198.51.100.7:4431", "198.51.100.7:4431"),  # a proxy that sent a port: as it came
    ("2001:db8::/64", "2001:db8::/64"),  # a key is its own key
])
def test_the_limit_key_of_an_address(address: str, key: str):
    from app.core.networks import limit_key

    assert limit_key(address) == key


def test_the_limit_key_takes_its_prefixes_from_the_settings():
    from app.core.networks import limit_key, network_key
    from app.core.settings import Settings

    assert limit_key("198.51.100.7", ipv4_prefix=24) == "198.51.100.0/24"
    assert limit_key("::ffff:198.51.100.7", ipv4_prefix=16) == "198.51.0.0/16"
    assert limit_key("2001:db8:1:2:3::1", ipv6_prefix=48) == "2001:db8:1::/48"
    assert limit_key("2001:db8:1:2:3::1", ipv6_prefix=128) == "2001:db8:1:2:3::1"
    assert limit_key("2001:db8:1:2:3::1", ipv6_prefix=0) == "::/0"
    key = network_key(Settings(limit_ipv4_prefix=24, limit_ipv6_prefix=56))
    assert key("203.0.113.9") == "203.0.113.0/24"
    assert key("2001:db8:1:2ff::1") == "2001:db8:1:200::/56"
    with pytest.raises(ValueError):
        Settings(limit_ipv6_prefix=129)
