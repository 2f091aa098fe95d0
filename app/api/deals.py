"""A finished round's deal shared with another room (issue #47; ``app/rooms/deals.py``).

- ``GET /api/deals/{id}`` (``id``: a finished round's public id, which its room's members see
  in the night's record): the deal's shape and how it went, seat by seat, with no token. No
  names, no room code, no card and no seed: a room that is about to play the deal learns
  nothing of its hands.
- ``POST /api/rooms/{code}/deal`` ``{"deal": id}`` with the host's token (``Authorization:
  Bearer``): the room's next ``start`` deals from that deal; ``{"deal": null}`` drops it. The
  database is read here, outside the room's inbox; the room's actor checks the rest.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict
from sqlalchemy.exc import SQLAlchemyError

from app.api import parts
from app.api.history import _bearer, _sessions
from app.api.rooms import ApiError
from app.core.codes import normalize_code, token_hash
from app.core.protocol import Err
from app.history.deals import deal_result, load_deal
from app.rooms import commands

router = APIRouter()

DEAL_NOT_FOUND = "deal_not_found"
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{22}$")  # a round's public id (app.history.writer.new_public_id)


class UseDeal(BaseModel):
    model_config = ConfigDict(extra="forbid")
    deal: str | None


async def _deal(request: Request, deal_id: str) -> tuple[Any, dict[str, Any]]:
    if not _ID_RE.match(deal_id):
        raise ApiError(404, DEAL_NOT_FOUND, "no such deal")
    try:
        found = await load_deal(_sessions(request), deal_id)
    except SQLAlchemyError:
        raise ApiError(503, Err.UNAVAILABLE, "history is not available, try again") from None
    if found is None:
        raise ApiError(404, DEAL_NOT_FOUND, "no such deal")
    return found


@router.get("/api/deals/{deal_id}")
async def get_deal(deal_id: str, request: Request) -> dict[str, Any]:
    row, record = await _deal(request, deal_id)
    return {"deal": row.public_id, "seats": len(record["players"]), "rules": record["rules"],
            "result": deal_result(row)}


@router.post("/api/rooms/{code}/deal")
async def use_deal(code: str, body: UseDeal, request: Request) -> dict[str, Any]:
    digest = token_hash(_bearer(request))
    room_code = normalize_code(code)
    if room_code is None:
        raise ApiError(404, Err.ROOM_NOT_FOUND, "no room with that code")
    deal = None
    if body.deal is not None:
        row, record = await _deal(request, body.deal)
        deal = {"id": row.public_id, "seed": record["seed"], "dealer": int(record["dealer"]),
                "seats": len(record["players"]), "rules": record["rules"]}
    answer = await parts.submit(request)(room_code, commands.command("use_deal", digest, deal))
    if answer["type"] == "error":
        status = {Err.ROOM_NOT_FOUND: 404, Err.NOT_HOST: 403, Err.NOT_IN_LOBBY: 409, Err.DEAL_MISMATCH: 409,
                  Err.UNAVAILABLE: 503}.get(answer["code"], 400)
        raise ApiError(status, answer["code"], answer["message"])
    return {"deal": None if deal is None else {"id": deal["id"], "seats": deal["seats"]}}
