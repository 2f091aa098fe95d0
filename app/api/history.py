"""History routes: the night's rounds and scores, one round's summary, and its public replay."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Request

from app.api.rooms import ApiError
from app.core.codes import normalize_code
from app.core.protocol import Err
from app.history.writer import load_round, public_replay, room_history, round_summary
from engine import IllegalAction

router = APIRouter()


def _sessions(request: Request):
    sessions = getattr(request.app.state, "db_sessions", None)
    if sessions is None:
        raise ApiError(503, Err.UNAVAILABLE, "history is not available")
    return sessions


@router.get("/api/rooms/{code}/history")
async def history(code: str, request: Request) -> dict[str, Any]:
    room_code = normalize_code(code)
    found = await room_history(_sessions(request), room_code) if room_code else None
    if found is None:
        return {"code": room_code, "matches": []}
    return found


@router.get("/api/rounds/{round_id}")
async def round_detail(round_id: int, request: Request) -> dict[str, Any]:
    row = await load_round(_sessions(request), round_id)
    if row is None:
        raise ApiError(404, "round_not_found", "no such round")
    return round_summary(row)


@router.get("/api/rounds/{round_id}/replay")
async def round_replay(round_id: int, request: Request) -> dict[str, Any]:
    row = await load_round(_sessions(request), round_id)
    if row is None:
        raise ApiError(404, "round_not_found", "no such round")
    try:
        steps = public_replay(orjson.loads(row.record.record))
    except IllegalAction as refused:
        # a record the engine no longer plays out the same way (a round of an older engine
        # that went past today's move limit, say): the summary above still stands
        raise ApiError(409, "replay_unavailable", "this round does not replay with this server's "
                       f"rules engine ({refused.code.value})") from None
    return {"round": round_summary(row), "steps": steps}
