"""Database access: an async engine from ``DATABASE_URL`` (SQLite by default, PostgreSQL via
asyncpg), and Alembic upgrades to head (on start and from ``mercyless migrate``)."""

from __future__ import annotations

import asyncio

from alembic import command
from alembic.config import Config
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine

from app.core.paths import ALEMBIC_INI, MIGRATIONS_DIR


def make_engine(url: str) -> AsyncEngine:
    kwargs: dict[str, object] = {"pool_pre_ping": True}
    if url.startswith("sqlite"):
        kwargs = {}
    return create_async_engine(url, **kwargs)


def sessions(engine: AsyncEngine) -> async_sessionmaker:
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Config:
    cfg = Config(str(ALEMBIC_INI))
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url)
    return cfg


def upgrade_sync(url: str) -> None:
    command.upgrade(alembic_config(url), "head")


async def upgrade(url: str) -> None:
    """Alembic runs its own event loop for async drivers: keep it off ours."""
    await asyncio.to_thread(upgrade_sync, url)
