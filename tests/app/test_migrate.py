"""Processes that start together on a fresh database upgrade its schema one at a time
(migrations/env.py: an advisory lock on PostgreSQL, a file lock on SQLite): none of them fails
in the migration, and the schema ends at head once."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from app.history.db import alembic_config

from .harness import ServerProcess

PG = "127.0.0.1:5432"


def _psql(sql: str) -> None:
    subprocess.run(["psql", "-h", "127.0.0.1", "-d", "test", "-q", "-c", sql], check=True,
                   capture_output=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_database(request, tmp_path: Path):
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'fresh.sqlite3'}"
        return
    name = f"mercyless_{uuid.uuid4().hex[:10]}"
    _psql(f"CREATE DATABASE {name}")
    yield f"postgresql+asyncpg://root@{PG}/{name}"
    _psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def test_three_processes_started_at_once_on_a_fresh_database_migrate_it_once(fresh_database):
    servers = [ServerProcess(database_url=fresh_database, log_level="INFO") for _ in range(3)]
    try:
        for server in servers:
            server.launch()
        for server in servers:
            server.wait_started()
    finally:
        logs = [server.stop() for server in servers]
    for log in logs:
        assert "Traceback" not in log, log[-3000:]
        assert "not migrated" not in log, log[-3000:]
        assert "mercyless ready" in log
    head = ScriptDirectory.from_config(alembic_config(fresh_database)).get_current_head()
    engine = create_async_engine(fresh_database)
    async with engine.connect() as conn:
        versions = [r[0] for r in await conn.execute(text("SELECT version_num FROM alembic_version"))]
        rounds = (await conn.execute(text("SELECT count(*) FROM rounds"))).scalar()
    await engine.dispose()
    assert versions == [head]
    assert rounds == 0
