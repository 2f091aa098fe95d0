"""Issue #43, points 4 and 5, black-box against real server processes: connections that never
send their request head are counted and capped per address and in all (app/api/edge.py
``PendingHandshakes``), and the server answers only to its own names (DNS rebinding: the Host
allow-list of app/core/addresses.py, for HTTP and for the game's WebSocket handshakes), with the
invite's addresses for a room's members only."""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import selectors
import socket
import subprocess
import sys
import time
from urllib.parse import urlsplit

import httpx
import pytest
import yaml

from app.cli import connection_limits
from app.core.addresses import HostAllowList
from app.core.settings import Settings

from .harness import ROOT
from .test_forwarded import _nginx

#: Peers of their own on the loopback network (Linux answers all of 127/8): the silent ones are
#: not 127.0.0.1, which FORWARDED_ALLOW_IPS trusts as a proxy (counted in the total only)
ATTACKER = "127.0.0.2"


def _silent(port: int, count: int, source: str) -> list[socket.socket]:
    """``count`` connections from ``source`` that never send a byte."""
    held = []
    for _ in range(count):
        sock = socket.socket()
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        held.append(sock)
    return held


def _closed_by_server(held: list[socket.socket], expected: int, within_s: float) -> int:
    """How many of ``held`` the server closed (EOF or reset), polled until ``expected`` of them
    were or ``within_s`` passed."""
    closed: set[socket.socket] = set()
    deadline = time.monotonic() + within_s
    with selectors.DefaultSelector() as selector:
        for sock in held:
            selector.register(sock, selectors.EVENT_READ)
        while len(closed) < expected and (left := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(left):
                try:
                    data = key.fileobj.recv(1024)  # type: ignore[union-attr]
                except ConnectionError:
                    data = b""
                if not data:
                    closed.add(key.fileobj)  # type: ignore[arg-type]
                    selector.unregister(key.fileobj)
    return len(closed)


def _open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _answered(url: str, within_s: float, **kwargs) -> httpx.Response:
    """A request that gets its answer within ``within_s``, tried again while the server drops it."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return httpx.get(url, timeout=max(0.1, deadline - time.monotonic()), **kwargs)
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # the next try, not a wait for the server: it has already answered


# -- point 4: connections before the handshake ----------------------------------------------------

@pytest.mark.skipif(not hasattr(resource, "prlimit") or not os.path.isdir("/proc/self/fd"),
                    reason="lowers the server's open-files limit with prlimit (Linux)")
def test_silent_connections_from_one_address_leave_new_clients_their_answer(edge_server):
    """1,100 silent connections from one address, held 10-15 s, took every descriptor of a
    server with 1,024 and every new client got a reset, with nothing logged. Here the server
    has 200 descriptors to spare and one address holds 300 silent connections: past 20 they are
    closed at once, a new client is answered at once, and the cap is logged (once)."""
    server = edge_server(pending_handshakes_per_ip=20, request_read_timeout_s=60)
    pid = server.proc.pid
    spare = 200
    limit = _open_files(pid) + spare
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, limit))
    held = _silent(server.port, spare + 100, ATTACKER)
    try:
        began = time.monotonic()
        made = httpx.post(f"{server.url}/api/rooms", json={"name": "Ann"}, timeout=5)
        assert made.status_code == 201 and time.monotonic() - began < 5, made.text
        # another address has a count of its own
        with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.3"), timeout=5) as other:
            assert other.get(f"{server.url}/api/rules").status_code == 200
        # all but 20 closed at once, long before the read timeout; the 20 are still held
        assert _closed_by_server(held, len(held) - 20, within_s=10) == len(held) - 20
        assert _open_files(pid) < limit - 100
    finally:
        for sock in held:
            sock.close()
    log = server.stop()
    lines = [json.loads(line) for line in log.splitlines() if '"PENDING_HANDSHAKES_PER_IP"' in line]
    # rate-limited: one line for the 280 refusals (two if the test ran past the 5 s window)
    assert 1 <= len(lines) <= 2, log[-3000:]
    assert lines[0]["level"] == "warning" and lines[0]["limit"] == 20 and lines[0]["address"] == ATTACKER
    assert lines[0]["pending_address"] == 20 and "PENDING_HANDSHAKES_PER_IP=20" in lines[0]["msg"]


def test_the_total_cap_counts_every_address_and_lets_go_as_heads_arrive(edge_server):
    """Past MAX_PENDING_HANDSHAKES in all a new connection is closed at once, whatever its
    address; a connection stops counting as soon as its head arrives (kept-alive and upgraded
    ones never count), and one the client closed stops counting too."""
    server = edge_server(pending_handshakes_per_ip=4, max_pending_handshakes=10, request_read_timeout_s=60)
    # kept-alive connections whose head came are no longer pending: 12 from one address
    clients = [httpx.Client(base_url=server.url, transport=httpx.HTTPTransport(local_address=ATTACKER))
               for _ in range(12)]
    try:
        assert {c.get("/api/rules").status_code for c in clients} == {200}
    finally:
        for c in clients:
            c.close()
    held = [sock for n in range(3, 7) for sock in _silent(server.port, 3, f"127.0.0.{n}")]  # 12 from 4
    try:
        assert _closed_by_server(held, 2, within_s=10) == 2
        with pytest.raises(httpx.HTTPError):  # the total is full: a new client too is closed at once
            httpx.get(f"{server.url}/api/rules", timeout=5)
    finally:
        for sock in held:
            sock.close()
    assert _answered(f"{server.url}/api/rules", within_s=10).status_code == 200
    log = server.stop()
    lines = [json.loads(line) for line in log.splitlines() if '"MAX_PENDING_HANDSHAKES"' in line]
    assert len(lines) == 1 and lines[0]["limit"] == 10 and lines[0]["pending"] == 10, log[-3000:]


def test_limit_concurrency_comes_from_the_open_files_limit_and_fits_a_city_of_sockets():
    """uvicorn's limit_concurrency counts open WebSockets: derived from the descriptors a process
    has, 10,000 sockets fit where the system gives them; pending handshakes take a quarter at most."""
    settings = Settings(bot_workers=8, redis_max_connections=64)
    assert connection_limits(settings, 1_048_576) == (1_048_576 - 128 - 64 - 32, 4096)
    assert connection_limits(settings, 1024) == (1024 - 224, (1024 - 224) // 4)
    assert connection_limits(settings, None) == (None, 4096)
    assert connection_limits(settings.model_copy(update={"max_connections": 20_000}), 1024) == (20_000, 4096)
    assert connection_limits(settings.model_copy(update={"max_connections": 0}), 1024) == (None, 4096)
    assert connection_limits(settings.model_copy(update={"max_pending_handshakes": 0}), 1024) == (800, 0)


def test_the_soft_open_files_limit_is_raised_to_the_hard_one():
    """A soft limit of 1,024 is common, and every socket is a descriptor: the server takes what
    the hard limit allows at start (app/cli.py ``open_files_limit``, in a process of its own)."""
    script = ("import json, resource; from app.cli import open_files_limit; "
              "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE); "
              "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)); "
              "print(json.dumps([open_files_limit(), resource.getrlimit(resource.RLIMIT_NOFILE), hard]))")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    (before, now), got, hard = json.loads(out.stdout)
    if hard == resource.RLIM_INFINITY:
        assert before == 256 and now > 256
    else:
        assert before == 256 and now == hard and got == [hard, hard]


# -- point 5: DNS rebinding -------------------------------------------------------------------------

async def _handshake(port: int, path: str, host: str) -> bytes:
    """A WebSocket handshake with ``host`` in its Host header: the answer's head (and body)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     "Sec-WebSocket-Version: 13\r\n\r\n".encode())
        answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", answer)
        if length and not answer.startswith(b"HTTP/1.1 101 "):  # (a proxy keeps the connection)
            answer += await asyncio.wait_for(reader.readexactly(int(length[1])), 5)
        return answer
    finally:
        writer.close()


async def test_a_foreign_host_is_refused_over_http_and_at_the_websocket_handshake(edge_server):
    """A page of evil.example whose name resolves to 127.0.0.1 reached the server: now its Host
    gets 400 bad_host, on the API and on the game's socket, before the socket is accepted."""
    server = await asyncio.to_thread(edge_server, public_url="https://uno.example.org:8443/",
                                     allowed_hosts=["games.example.net", "*.party.example"])
    made = await asyncio.to_thread(server.create, "Ann")
    short = socket.gethostname().lower().partition(".")[0]
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        foreign = ("evil.example", f"evil.example:{server.port}", "127.0.0.1.evil.example", "party.example")
        for host in foreign:
            refused = await http.get("/api/rules", headers={"host": host})
            assert refused.status_code == 400, (host, refused.text)
            assert refused.json()["error"]["code"] == "bad_host"
            assert refused.headers["x-frame-options"] == "DENY"  # the edge's headers, as on any answer
        assert (await http.post("/api/rooms", json={"name": "Eve"}, headers={"host": "evil.example"})
                ).status_code == 400
        # its own names and addresses, PUBLIC_URL's host and ALLOWED_HOSTS pass; a port is ignored
        own = ["localhost", f"localhost:{server.port}", "127.0.0.1", f"127.0.0.1:{server.port}", "[::1]",
               f"[::1]:{server.port}", "127.0.1.1", "tv.localhost", short, f"{short}.local",
               "uno.example.org", "UNO.example.org:443", "games.example.net", "a.party.example"]
        for host in own:
            answer = await http.get("/api/rules", headers={"host": host})
            assert answer.status_code == 200, (host, answer.text)
        # a health probe names the backend as it likes, and learns nothing
        assert (await http.get("/healthz", headers={"host": "evil.example"})).status_code == 200
    path = f"/ws/{made['code']}"
    refused = await _handshake(server.port, path, "evil.example")
    assert refused.startswith(b"HTTP/1.1 400 ") and b'"code":"bad_host"' in refused, refused
    assert (await _handshake(server.port, path, "evil.example:80")).startswith(b"HTTP/1.1 400 ")
    for host in (f"localhost:{server.port}", "uno.example.org"):
        assert (await _handshake(server.port, path, host)).startswith(b"HTTP/1.1 101 "), host


def test_allowed_hosts_star_turns_the_check_off_and_an_address_literal_always_passes():
    """An address in the Host header is no rebinding (the page's origin is that address): a
    NAT's public address, a LAN address, a container's forwarded port all keep working."""
    assert HostAllowList("127.0.0.1", None, ["*"]).allows("evil.example")
    for listen in ("0.0.0.0", "127.0.0.1"):
        allow = HostAllowList(listen, None, [])
        for host in ("192.168.1.20:8000", "[fe80::1]:8000", "203.0.113.9", "[2001:db8::5]"):
            assert allow.allows(host), (listen, host)
        for host in ("evil.example", "127.0.0.1.nip.io", "192.168.1.20.evil.example:8000"):
            assert not allow.allows(host), (listen, host)
    assert HostAllowList("127.0.0.1", None, []).allows(None)  # no Host header: no browser's request


def test_the_invite_is_for_the_rooms_members(edge_server):
    """/api/invite listed every interface address to anyone who asked: now it takes a member's
    token, as the room's history does."""
    server = edge_server(public_url="https://uno.example.org")
    ann = server.create("Ann")
    other = server.create("Bob")
    url = f"{server.url}/api/invite"
    anonymous = httpx.get(url, params={"code": ann["code"]})
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "auth_required"
    for code, token in ((ann["code"], other["token"]), ("ZZZZZZ", ann["token"]), ("", ann["token"]),
                        (ann["code"], "x" * 22)):
        refused = httpx.get(url, params={"code": code}, headers={"authorization": f"Bearer {token}"})
        assert refused.status_code == 403, (code, refused.text)
        assert refused.json()["error"]["code"] == "forbidden"
    member = httpx.get(url, params={"code": ann["code"].lower()},
                       headers={"authorization": f"Bearer {ann['token']}"})
    assert member.status_code == 200
    assert member.json() == {"urls": ["https://uno.example.org"], "local_only": False}


def _compose_env() -> dict[str, str]:
    """docker-compose.yml's app settings, ``${VAR:-default}`` read as its default."""
    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    env = {k: str(v) for k, v in spec["services"]["app"]["environment"].items()}
    return {k: re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", v) for k, v in env.items()}


async def test_the_compose_setup_behind_the_shipped_nginx_answers_its_names_only(edge_server, tmp_path):
    """nginx passes the browser's Host: with docker-compose.yml's settings the site opens at
    PUBLIC_URL's host (and at "app", a Prometheus's), and a rebinding name gets 400 through nginx."""
    env = _compose_env()
    public = urlsplit(env["PUBLIC_URL"])
    server = await asyncio.to_thread(
        edge_server, **{k.lower(): env[k] for k in ("PUBLIC_URL", "ALLOWED_HOSTS", "FORWARDED_ALLOW_IPS")})
    made = await asyncio.to_thread(server.create, "Ann")
    with _nginx(tmp_path, server.port, "127.0.0.5") as port:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            assert (await http.get("/", headers={"host": public.netloc})).status_code == 200
            assert (await http.get("/api/rules", headers={"host": "app:8000"})).status_code == 200
            refused = await http.get("/api/rules", headers={"host": "evil.example"})
            assert refused.status_code == 400 and refused.json()["error"]["code"] == "bad_host"
        path = f"/ws/{made['code']}"
        assert (await _handshake(port, path, public.netloc)).startswith(b"HTTP/1.1 101 ")
        assert (await _handshake(port, path, "evil.example")).startswith(b"HTTP/1.1 400 ")
