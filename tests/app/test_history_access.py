"""The night's record names its room, and a room's code lets anyone in: the record is read with a
credential of the room (a member's token, or a share id its host made), and round ids cannot be
walked. Over HTTP against a real server process; the migration on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import re
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from .harness import ServerProcess
from .test_history import PG, _play_rounds_in, _psql, _rows, bearer

ROUND_ID = re.compile(r"^[A-Za-z0-9_-]{22}$")


async def _written(http: httpx.AsyncClient, code: str, token: str, rounds: int, timeout: float = 30) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        r = await http.get(f"/api/rooms/{code}/history", headers=bearer(token))
        assert r.status_code == 200, r.text
        if sum(len(m["rounds"]) for m in r.json()["matches"]) >= rounds:
            return r.json()
        assert asyncio.get_running_loop().time() < deadline, "the round was not written"
        await asyncio.sleep(0.1)  # polling an HTTP endpoint: there is no event to wait on


def _error(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.json()["error"]["code"] == code, r.text


async def test_round_ids_cannot_be_walked_and_the_record_needs_a_credential_of_its_room():
    server = ServerProcess(redis="fake").start()
    try:
        host = server.create("Ann")
        code = host["code"]
        stranger = server.create("Eve")  # a member of another room
        _, ann = await _play_rounds_in(server, code, host["token"], 1, seed=3)
        bob = server.join(code, "Bob")  # after the round: a member too
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            body = await _written(http, code, host["token"], 1)
            [one] = [r for m in body["matches"] for r in m["rounds"]]
            rid = one["id"]
            assert ROUND_ID.match(rid) and one["room"] == code

            # the attack: walk the sequential ids, read each round's room, join it
            for n in (1, 2, 3):
                _error(await http.get(f"/api/rounds/{n}"), 404, "round_not_found")
                _error(await http.get(f"/api/rounds/{n}/replay"), 404, "round_not_found")

            # the room's record: a member's token, nobody else's
            _error(await http.get(f"/api/rooms/{code}/history"), 401, "auth_required")
            _error(await http.get(f"/api/rooms/{code}/history", headers={"authorization": host["token"]}),
                   401, "auth_required")
            _error(await http.get(f"/api/rooms/{code}/history", headers=bearer(stranger["token"])),
                   403, "forbidden")
            _error(await http.get(f"/api/rooms/{code}/history", headers=bearer("x" * 22)), 403, "forbidden")
            _error(await http.get("/api/rooms/ZZZZZZ/history", headers=bearer(host["token"])),
                   403, "forbidden")
            seen = await http.get(f"/api/rooms/{code}/history", headers=bearer(bob["token"]))
            assert seen.status_code == 200 and seen.json() == body

            # a round by its id: a member of its room; to anyone else it does not exist
            _error(await http.get(f"/api/rounds/{rid}"), 401, "auth_required")
            _error(await http.get(f"/api/rounds/{rid}/replay"), 401, "auth_required")
            _error(await http.get(f"/api/rounds/{rid}", headers=bearer(stranger["token"])),
                   404, "round_not_found")
            _error(await http.get(f"/api/rounds/{rid}/replay", headers=bearer(stranger["token"])),
                   404, "round_not_found")
            assert (await http.get(f"/api/rounds/{rid}", headers=bearer(host["token"]))).json() == one
            replay = (await http.get(f"/api/rounds/{rid}/replay", headers=bearer(bob["token"]))).json()
            assert replay["round"] == one and len(replay["steps"]) == one["actions"] + 1

            # shared on purpose: by the host only, one id per room, read by anyone who has it,
            # without the room's code
            share_url = f"/api/rooms/{code}/history/share"
            _error(await http.post(share_url), 401, "auth_required")
            _error(await http.post(share_url, headers=bearer(bob["token"])), 403, "not_host")
            _error(await http.post(share_url, headers=bearer(stranger["token"])), 403, "forbidden")
            made = await http.post(share_url, headers=bearer(host["token"]))
            assert made.status_code == 201, made.text
            share = made.json()["share"]
            assert ROUND_ID.match(share) and made.json()["url"] == f"/api/shared/{share}"
            assert (await http.post(share_url, headers=bearer(host["token"]))).json()["share"] == share
            shared = await http.get(f"/api/shared/{share}")
            assert shared.status_code == 200 and code not in shared.text
            assert [r["id"] for m in shared.json()["matches"] for r in m["rounds"]] == [rid]
            for path in (f"/api/shared/{share}/rounds/{rid}", f"/api/shared/{share}/rounds/{rid}/replay"):
                got = await http.get(path)
                assert got.status_code == 200 and code not in got.text, path
            again = await http.get(f"/api/shared/{share}/rounds/{rid}/replay")
            assert again.json()["steps"] == replay["steps"]
            _error(await http.get(f"/api/shared/{'A' * 22}"), 404, "share_not_found")
            _error(await http.get(f"/api/shared/{'A' * 22}/rounds/{rid}"), 404, "share_not_found")
            _error(await http.get(f"/api/shared/{share}/rounds/{'A' * 22}"), 404, "round_not_found")
        await ann.close()
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_the_migration_gives_every_stored_round_a_random_public_id(kind, tmp_path: Path):
    """A database of the first schema, with rounds in it, upgraded: every round has an id of its
    own that is no number, and the integer key stays where it was."""
    from app.history.db import alembic_config

    if kind == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'old.sqlite3'}"
    else:
        name = f"mercyless_{uuid.uuid4().hex[:10]}"
        _psql(f"CREATE DATABASE {name}")
        url = f"postgresql+asyncpg://root@{PG}/{name}"
    try:
        from alembic import command

        await asyncio.to_thread(command.upgrade, alembic_config(url), "0001")
        from sqlalchemy.ext.asyncio import create_async_engine

        engine = create_async_engine(url)
        async with engine.begin() as conn:
            await conn.execute(text("INSERT INTO matches (id, room_code, number, rules, started_ms) "
                                    "VALUES (1, 'ABCDEF', 1, '{}', 0)"))
            await conn.execute(text(  # past two chunks of the backfill
                "INSERT INTO rounds (id, uid, match_id, room_code, number, seed, dealer, points, "
                "eliminations, started_ms, ended_ms, duration_ms, action_count, match_over) VALUES "
                "(:n, :uid, 1, 'ABCDEF', :n, 's', 'p1', 0, 0, 0, 1, 1, 0, false)"),
                [{"n": n, "uid": f"u{n}"} for n in range(1, 2502)])
        await engine.dispose()
        await asyncio.to_thread(command.upgrade, alembic_config(url), "head")
        rows = await _rows(url, "SELECT id, public_id FROM rounds ORDER BY id")
        assert [r[0] for r in rows] == list(range(1, 2502))
        ids = [r[1] for r in rows]
        assert all(ROUND_ID.match(i) and not i.isdigit() for i in ids) and len(set(ids)) == len(ids)
    finally:
        if kind == "postgresql":
            subprocess.run(["psql", "-h", "127.0.0.1", "-d", "test", "-q", "-c",
                            f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)


async def test_a_round_id_out_of_range_or_malformed_is_a_clean_404_without_a_traceback():
    """``/api/rounds/99999999999999999999`` reached the database as an integer past 64 bits:
    a 500 and a traceback. Ids are checked at the edge now."""
    server = ServerProcess(redis="fake").start()
    try:
        token = server.create("Ann")["token"]
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            for raw in ("99999999999999999999", "-1", "0", "1e9", "%00", "%FF%FE", "a" * 5000,
                        "A" * 21, "A" * 23, "A" * 21 + "%2F", "' OR 1=1 --"):
                for path in (f"/api/rounds/{raw}", f"/api/rounds/{raw}/replay",
                             f"/api/shared/{raw}", f"/api/shared/{'A' * 22}/rounds/{raw}"):
                    for headers in ({}, bearer(token)):
                        r = await http.get(path, headers=headers)
                        assert 400 <= r.status_code < 500, (path, r.status_code, r.text)
                        assert re.fullmatch(r"[a-z_]+", r.json()["error"]["code"]), (path, r.text)
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]
