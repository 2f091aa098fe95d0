"""The client's address behind a proxy: the per-address limits (here FAILED_JOINS_PER_MIN) count
each client on its own when the proxy is one the deployment trusts (FORWARDED_ALLOW_IPS), and a
client cannot pick its own address. A real server process behind a tiny proxy of the test's,
then behind nginx with the shipped deploy/nginx.conf and docker-compose.yml's settings.

The loopback network is 127.0.0.0/8: the clients connect from 127.0.0.3 and 127.0.0.4, the
proxies reach the server from 127.0.0.2 (or 127.0.0.5), as separate hosts would."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml

from .harness import ROOT, ServerProcess, free_port

ANN, BOB = "127.0.0.3", "127.0.0.4"


class ForwardingProxy:
    """An HTTP proxy as nginx is configured (one request per connection): it sets
    X-Forwarded-For to the address of the client it sees, dropping the client's own, and
    reaches the server from ``source``."""

    def __init__(self, target_port: int, source: str) -> None:
        self.target_port = target_port
        self.source = source
        self.server: asyncio.base_events.Server | None = None
        self.port = 0

    async def __aenter__(self) -> ForwardingProxy:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")[0]
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = [line for line in head[:-4].split(b"\r\n")
                     if not line.lower().startswith(b"x-forwarded-for:")]
            lines.insert(1, b"X-Forwarded-For: " + peer.encode())
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.target_port,
                                                       local_addr=(self.source, 0))
        except (OSError, asyncio.IncompleteReadError):
            writer.close()
            return
        up_w.write(b"\r\n".join(lines) + b"\r\n\r\n")

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            w.close()

        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))


async def _failed_join(port: int, client: str, spoof: str | None = None) -> int:
    """A join with a code no room has, from address ``client``: its status (404 counted, 429
    once the address's failures reach the limit)."""
    headers = {"connection": "close"}
    if spoof:
        headers["x-forwarded-for"] = spoof
    transport = httpx.AsyncHTTPTransport(local_address=client)
    async with httpx.AsyncClient(transport=transport, timeout=10) as http:
        r = await http.post(f"http://127.0.0.1:{port}/api/rooms/ZZZZZZ/join", json={"name": "X"},
                            headers=headers)
    return r.status_code


@pytest.fixture
def servers():
    started: list[ServerProcess] = []
    yield started
    errors = [proc.stop() for proc in started]
    for err in errors:
        assert "Traceback" not in err, err[-3000:]


async def test_a_trusted_proxy_gives_each_client_its_own_limit_and_an_untrusted_one_does_not(servers):
    trusting = ServerProcess(redis="fake", failed_joins_per_min=2, forwarded_allow_ips="127.0.0.2")
    default = ServerProcess(redis="fake", failed_joins_per_min=2)
    servers += [await asyncio.to_thread(trusting.start), await asyncio.to_thread(default.start)]

    async with ForwardingProxy(trusting.port, "127.0.0.2") as proxy:
        assert [await _failed_join(proxy.port, ANN) for _ in range(3)] == [404, 404, 429]
        assert await _failed_join(proxy.port, BOB) == 404  # Bob's own count
    # a client that is no trusted proxy names nobody else: its header is ignored
    assert [await _failed_join(trusting.port, BOB, spoof=f"10.0.0.{n}") for n in range(2)] == [404, 429]

    # the default trusts only this host's own address: the proxy's header is ignored, and
    # every client behind it is the proxy
    async with ForwardingProxy(default.port, "127.0.0.2") as proxy:
        assert [await _failed_join(proxy.port, ANN) for _ in range(2)] == [404, 404]
        assert await _failed_join(proxy.port, BOB) == 429


def _compose_app_env() -> dict[str, str]:
    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return {k: str(v) for k, v in spec["services"]["app"]["environment"].items()}


def test_the_compose_app_is_reached_through_nginx_only():
    """FORWARDED_ALLOW_IPS="*" is safe only while nothing but nginx reaches the app."""
    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    app = spec["services"]["app"]
    assert "ports" not in app and app.get("network_mode") != "host"
    assert _compose_app_env()["FORWARDED_ALLOW_IPS"] == "*"


@contextlib.contextmanager
def _nginx(tmp_path: Path, upstream_port: int, source: str):
    """deploy/nginx.conf run by this machine's nginx, in front of ``upstream_port``, reaching
    it from ``source`` (a replica's peer is never 127.0.0.1 in compose); yields its port."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(binary).exists():
        pytest.fail("nginx is needed (Debian package nginx; .ci/run installs it)")
    port = free_port()
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    site = site.replace("server app:8000", f"server 127.0.0.1:{upstream_port}")
    site = site.replace("    listen 8080;\n", f"    listen 127.0.0.1:{port};\n    proxy_bind {source};\n")
    (tmp_path / "site.conf").write_text(site)
    temp = "".join(f"  {kind}_temp_path {tmp_path}/{kind};\n"
                   for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\ndaemon off;\nworker_processes 1;\n"
        f"events {{}}\nhttp {{\n  access_log off;\n{temp}  include {tmp_path}/site.conf;\n}}\n")
    proc = subprocess.Popen([binary, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "nginx did not start"
            time.sleep(0.05)  # a process coming up: nothing to wait on but its port
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


async def test_behind_the_shipped_nginx_each_client_has_its_own_address_and_cannot_pick_one(
        servers, tmp_path):
    """The shipped setup: every user had nginx's address, so one user's failed joins locked
    out the whole site. With docker-compose.yml's settings and deploy/nginx.conf each client
    counts on its own, and a client's own X-Forwarded-For does not get it a fresh count."""
    env = _compose_app_env()
    server = ServerProcess(redis="fake", failed_joins_per_min=2,
                           forwarded_allow_ips=env.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1"),
                           metrics=env.get("METRICS", "true"))
    servers.append(await asyncio.to_thread(server.start))
    with _nginx(tmp_path, server.port, "127.0.0.5") as port:
        spoofed = [await _failed_join(port, ANN, spoof=f"10.0.0.{n}") for n in range(3)]
        assert spoofed == [404, 404, 429]
        assert await _failed_join(port, BOB) == 404
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            # the operator's pages stay inside, even with the app's METRICS on
            for path in ("/metrics", "/docs", "/redoc", "/openapi.json"):
                assert (await http.get(path)).status_code == 404, path
            page = await http.get("/")
            assert page.status_code == 200 and page.headers["x-frame-options"] == "DENY"
        assert httpx.get(f"{server.url}/metrics").status_code == 200  # on the app's own port
