"""A finished round's deal shared with another room (issue #47): whoever has the round's public
id may deal its cards again in a room of theirs (``app/rooms/deals.py``) and compare the two
results. Only finished rounds are in the database, so a round in play is never shared; what is
read back here is the deal's shape and its result seat by seat, never a name, a room's code, a
card or the seed (the seed stays on the server until the new round is over)."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import select
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlalchemy.orm import selectinload

from app.history.models import Round


def deal_result(r: Round) -> dict[str, Any]:
    """How the round dealt from the deal went, seat by seat (no names: the players are another
    room's)."""
    winner = next((s.seat for s in r.seats if s.player_id == r.winner), None)
    return {"id": r.public_id, "winner_seat": winner, "points": r.points, "reason": r.reason,
            "seats": [{"seat": s.seat, "final_cards": s.final_cards, "eliminated": s.eliminated}
                      for s in r.seats]}


async def load_deal(sessions: async_sessionmaker, deal_id: str) -> tuple[Round, dict[str, Any]] | None:
    """The finished round ``deal_id`` and its record (seed, rules, dealer, players)."""
    async with sessions() as session:
        row = await session.scalar(
            select(Round).where(Round.public_id == deal_id)
            .options(selectinload(Round.seats), selectinload(Round.record)))
    if row is None:
        return None
    return row, orjson.loads(row.record.record)


async def shared_results(sessions: async_sessionmaker, ids: set[str]) -> dict[str, dict[str, Any]]:
    """The results of the deals ``ids`` (rounds of other rooms), by id."""
    if not ids:
        return {}
    async with sessions() as session:
        rows = (await session.scalars(
            select(Round).where(Round.public_id.in_(ids)).options(selectinload(Round.seats)))).all()
    return {r.public_id: deal_result(r) for r in rows}
