"""Alembic environment: async engines (aiosqlite, asyncpg), URL from the config or settings."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Iterator
from pathlib import Path

from alembic import context
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from app.history.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from app.core.settings import get_settings

    return get_settings().database_url


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


#: the advisory lock's key on PostgreSQL: every process of every release upgrading one database
#: takes the same one (a 64-bit number made from a fixed name)
LOCK_KEY = int.from_bytes(hashlib.sha256(b"mercyless:alembic-upgrade").digest()[:8], "big", signed=True)


@contextlib.contextmanager
def _file_lock(database: str | None) -> Iterator[None]:
    """SQLite: an exclusive lock on a file beside the database (``<db>.migrate.lock``), held by
    the process that upgrades; an in-memory database is nobody else's."""
    if not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    try:
        import fcntl
    except ImportError:  # not on POSIX: SQLite's own lock makes the loser fail, not corrupt
        yield
        return
    with open(Path(database).with_name(Path(database).name + ".migrate.lock"), "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@contextlib.contextmanager
def _serialized(connection) -> Iterator[None]:
    """One upgrade at a time: processes that start together on a fresh database would each
    create ``alembic_version`` and the tables, and all but one fail. The others wait here and
    then find the schema at head (nothing to do)."""
    dialect = connection.dialect.name
    if dialect == "postgresql":
        connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": LOCK_KEY})
        connection.commit()
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": LOCK_KEY})
            connection.commit()
    elif dialect == "sqlite":
        with _file_lock(connection.engine.url.database):
            yield
    else:
        yield


def _run(connection) -> None:
    with _serialized(connection):
        context.configure(connection=connection, target_metadata=target_metadata,
                          render_as_batch=True, compare_type=True)
        with context.begin_transaction():
            context.run_migrations()
        if connection.in_transaction():
            connection.commit()


async def run_migrations_online() -> None:
    engine = create_async_engine(_url())
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    asyncio.run(run_migrations_online())
