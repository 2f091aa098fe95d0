"""Where friends open the server: the console names every address it listens on, the lobby's
invite link uses one of them (or PUBLIC_URL), and a QR code carries the link to phones."""

from __future__ import annotations

from types import SimpleNamespace

import httpx
import pytest

from app.api.invite import qr_svg
from app.cli import _where
from app.core import addresses
from app.core.settings import Settings

from .harness import ServerProcess


def _interfaces(*ips: str):
    entry = lambda ip: SimpleNamespace(family=SimpleNamespace(name="AF_INET"), address=ip)  # noqa: E731
    v6 = SimpleNamespace(family=SimpleNamespace(name="AF_INET6"), address="fe80::1")
    return lambda: {"lo": [entry("127.0.0.1")], "eth0": [entry(ip) for ip in ips] + [v6]}


def test_on_all_interfaces_the_lan_addresses_come_first(monkeypatch):
    monkeypatch.setattr(addresses.psutil, "net_if_addrs", _interfaces("203.0.113.9", "169.254.1.1",
                                                                       "192.168.1.20"))
    assert addresses.reachable_urls("0.0.0.0", 8000) == ["http://192.168.1.20:8000", "http://203.0.113.9:8000"]
    assert addresses.reachable_urls("127.0.0.1", 8000) == []
    assert addresses.reachable_urls("10.0.0.5", 9000) == ["http://10.0.0.5:9000"]
    assert addresses.reachable_urls("0.0.0.0", 8000, "https://uno.example.org/") == ["https://uno.example.org"]


def test_the_console_says_who_can_open_the_server(monkeypatch):
    monkeypatch.setattr(addresses.psutil, "net_if_addrs", _interfaces("192.168.1.20"))
    alone = _where(Settings(listen_host="127.0.0.1", listen_port=8000))
    assert "http://127.0.0.1:8000/" in alone and "--host 0.0.0.0" in alone
    shared = _where(Settings(listen_host="0.0.0.0", listen_port=8000))
    assert "Friends can open: http://192.168.1.20:8000/" in shared


@pytest.fixture(scope="module")
def servers():
    started = {"alone": ServerProcess().start(), "public": ServerProcess(public_url="https://uno.example.org").start(),
               "qr3": ServerProcess(qr_per_min=3).start()}
    yield started
    for proc in started.values():
        assert "Traceback" not in proc.stop()


def _invite(server: ServerProcess) -> dict:
    """The invite as a member of a room asks for it (tests/app/test_edge_guard.py: no one else)."""
    made = server.create("Ann")
    answer = httpx.get(f"{server.url}/api/invite", params={"code": made["code"]},
                       headers={"authorization": f"Bearer {made['token']}"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_invite_says_when_only_this_computer_can_open_the_server(servers):
    assert _invite(servers["alone"]) == {"urls": [], "local_only": True}
    assert _invite(servers["public"]) == {"urls": ["https://uno.example.org"], "local_only": False}


def test_the_qr_code_carries_the_link(servers):
    link = "http://192.168.1.20:8000/r/ABCDEF"
    answer = httpx.get(f"{servers['alone'].url}/api/qr.svg", params={"text": link})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("image/svg+xml")
    assert answer.content.startswith(b'<svg xmlns="http://www.w3.org/2000/svg"')  # drawn by an <img>
    assert b"<path" in answer.content and answer.content == qr_svg(link)
    assert qr_svg(link) != qr_svg(link + "X")
    too_long = httpx.get(f"{servers['alone'].url}/api/qr.svg", params={"text": "x" * 600})
    assert too_long.status_code == 400


def test_a_qr_code_is_bounded_in_bytes_and_per_address(servers):
    """Drawing a QR code is pure Python on the event loop: 512 emoji (2 KB of UTF-8, under the
    old 512-character cap) took ~150 ms, and anyone could ask for them with no limit, stalling
    every room of the process. The text is bounded in bytes; an address gets QR_PER_MIN."""
    url = f"{servers['qr3'].url}/api/qr.svg"
    big = httpx.get(url, params={"text": "\U0001F600" * 200})  # 800 bytes
    assert big.status_code == 400 and big.json()["error"]["code"] == "bad_message", big.text[:200]
    assert httpx.get(url, params={"text": "é" * 256}).status_code == 200  # 512 bytes: fits
    for n in range(2):
        assert httpx.get(url, params={"text": f"http://192.168.1.20:8000/r/ABCDE{n}"}).status_code == 200
    limited = httpx.get(url, params={"text": "http://192.168.1.20:8000/r/ABCDEF"})
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limited"


def test_an_invite_path_with_a_slash_gets_the_client_not_a_json_404(servers):
    answer = httpx.get(f"{servers['alone'].url}/r/ABC/DEF")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
