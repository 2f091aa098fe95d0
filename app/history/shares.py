"""A night's record shared on purpose: the host asks for a share id (one per room), and whoever
has it reads that room's rounds and replays (``app/api/history.py``)."""

from __future__ import annotations

import secrets

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker

from app.history.models import HistoryShare


def new_share_id() -> str:
    """128 random bits, URL-safe (22 characters)."""
    return secrets.token_urlsafe(16)


async def share_room(sessions: async_sessionmaker, code: str, since_ms: int, now_ms: int) -> str:
    """The share id of room ``code``'s record from ``since_ms`` on: made on the first call, the
    same one after (a second click, or two at once, share one id)."""
    query = select(HistoryShare.share_id).where(HistoryShare.room_code == code,
                                                HistoryShare.since_ms == since_ms)
    async with sessions() as session:
        found = await session.scalar(query)
        if found is not None:
            return found
        share_id = new_share_id()
        session.add(HistoryShare(share_id=share_id, room_code=code, since_ms=since_ms, created_ms=now_ms))
        try:
            await session.commit()
        except IntegrityError:  # made meanwhile by another request
            await session.rollback()
            found = await session.scalar(query)
            if found is None:
                raise
            return found
        return share_id


async def load_share(sessions: async_sessionmaker, share_id: str) -> HistoryShare | None:
    async with sessions() as session:
        return await session.scalar(select(HistoryShare).where(HistoryShare.share_id == share_id))
