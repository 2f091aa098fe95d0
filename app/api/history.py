"""History routes: the night's rounds and scores, one round's summary, and its public replay.

The record names its room, and a room's code is what lets a stranger in, so every route asks
for a credential of the room (docs/server.md "Protocol additions"):

- a member's token (``Authorization: Bearer <token>``, the token of a seat or a spectator of
  the room as it is now in Redis): the room's history, and its rounds by their ids;
- a share id the host made (``POST /api/rooms/{code}/history/share``): whoever has it reads
  that room's rounds and replays, without the room's code, after the room is gone too.

Round ids on the wire are random (``Round.public_id``), never the table's sequence. A member
sees only the rounds played since the room was made: a room that had the same code before (a
code is free again once its room expired) is not theirs.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import orjson
from fastapi import APIRouter, Request
from redis.exceptions import RedisError

from app.api import parts
from app.api.rooms import ApiError
from app.core.codes import normalize_code, token_hash
from app.core.protocol import Err
from app.history.models import Round
from app.history.reads import load_round, public_replay, room_history, round_summary
from app.history.shares import load_share, share_room
from app.history.story import load_night, night_story, round_trace
from app.history.verify import BadRecord, verify_row
from app.rooms import personas
from app.rooms.model import Room, Seat, Spectator
from engine import IllegalAction

router = APIRouter()

AUTH_REQUIRED = "auth_required"
FORBIDDEN = "forbidden"
ROUND_NOT_FOUND = "round_not_found"
SHARE_NOT_FOUND = "share_not_found"

#: Round and share ids: ``secrets.token_urlsafe(16)``. Anything else is refused before the
#: database is asked (an integer past 64 bits was a 500 there).
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{22}$")
#: Tokens are 22 characters (``app.core.codes.new_token``); a longer header is not one.
_TOKEN_MAX = 64
#: The rounds a member sees start at most this long before the room was made (processes'
#: clocks may differ a little); a room that had the same code before expired hours earlier.
SINCE_SLACK_MS = 60_000


def _sessions(request: Request):
    sessions = getattr(request.app.state, "db_sessions", None)
    if sessions is None:
        raise ApiError(503, Err.UNAVAILABLE, "history is not available")
    return sessions


def _bearer(request: Request) -> str:
    """The token of ``Authorization: Bearer <token>``; 401 without one."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > _TOKEN_MAX:
        raise ApiError(401, AUTH_REQUIRED, "send the room's token: Authorization: Bearer <token>")
    return token


async def _membership(request: Request, code: str | None, token: str) -> tuple[Room, Seat | Spectator] | None:
    """The room ``code`` as it is now and the member ``token`` is, or ``None``."""
    if code is None:
        return None
    try:
        found = await parts.store(request).load(code)
    except RedisError:
        raise ApiError(503, Err.UNAVAILABLE, "storage unavailable, try again") from None
    if found is None:
        return None
    room = Room.from_dict(found[1])
    member = room.member_by_token(token_hash(token))
    return None if member is None else (room, member)


def _since(room: Room) -> int:
    return room.created_ms - SINCE_SLACK_MS


def _round_id(raw: str) -> str:
    if not _ID_RE.match(raw):
        raise ApiError(404, ROUND_NOT_FOUND, "no such round")
    return raw


async def _members_round(request: Request, round_id: str) -> Round:
    """The round ``round_id`` if the request's token is a member's of its room; a round of
    another room, or none, is the same 404."""
    round_id = _round_id(round_id)
    token = _bearer(request)
    row = await load_round(_sessions(request), round_id)
    if row is not None:
        found = await _membership(request, row.room_code, token)
        if found is not None and row.started_ms >= _since(found[0]):
            return row
    raise ApiError(404, ROUND_NOT_FOUND, "no such round")


async def _shared_round(request: Request, share_id: str, round_id: str) -> Round:
    share = await _share(request, share_id)
    row = await load_round(_sessions(request), _round_id(round_id))
    if row is None or row.room_code != share.room_code or row.started_ms < share.since_ms:
        raise ApiError(404, ROUND_NOT_FOUND, "no such round")
    return row


async def _share(request: Request, share_id: str):
    share = await load_share(_sessions(request), share_id) if _ID_RE.match(share_id) else None
    if share is None:
        raise ApiError(404, SHARE_NOT_FOUND, "no such shared record")
    return share


def _replay(row: Round, with_room: bool) -> dict[str, Any]:
    try:
        steps = public_replay(orjson.loads(row.record.record))
    except IllegalAction as refused:
        # a record the engine no longer plays out the same way (a round of an older engine
        # that went past today's move limit, say): the summary above still stands
        raise ApiError(409, "replay_unavailable", "this round does not replay with this server's "
                       f"rules engine ({refused.code.value})") from None
    return {"round": round_summary(row, with_room), "steps": steps}


async def _verify(row: Round, with_room: bool) -> dict[str, Any]:
    """The round dealt again from its seed (protocol.md "Fair deal"; app/history/verify.py):
    the verdict, and the document ``mercyless verify --file`` checks again offline."""
    try:
        verdict, document = await asyncio.to_thread(verify_row, row)
    except BadRecord as bad:
        raise ApiError(409, "verify_unavailable", str(bad)) from None
    if not with_room:
        document["round"].pop("room", None)
    return {**verdict.to_dict(), **document}


# -- a member's --------------------------------------------------------------------------------

@router.get("/api/rooms/{code}/history")
async def history(code: str, request: Request) -> dict[str, Any]:
    token = _bearer(request)
    room_code = normalize_code(code)
    found = await _membership(request, room_code, token)
    if found is None:  # no such room, or not a member of it: the same answer
        raise ApiError(403, FORBIDDEN, "this token is not one of this room's")
    record = await room_history(_sessions(request), room_code, since_ms=_since(found[0]))
    return record or {"code": room_code, "matches": []}


@router.get("/api/rooms/{code}/story")
async def story(code: str, request: Request) -> dict[str, Any]:
    """The night's story (``app/history/story.py``): matches and rounds won, the awards. Its
    rounds are played through the engine off the event loop (a night is a few hundred moves)."""
    token = _bearer(request)
    room_code = normalize_code(code)
    found = await _membership(request, room_code, token)
    if found is None:
        raise ApiError(403, FORBIDDEN, "this token is not one of this room's")
    rows = await load_night(_sessions(request), room_code, _since(found[0]))
    told = await asyncio.to_thread(lambda: night_story([round_trace(r) for r in rows], personas.hue))
    return {"code": room_code, **told}


@router.get("/api/rounds/{round_id}")
async def round_detail(round_id: str, request: Request) -> dict[str, Any]:
    return round_summary(await _members_round(request, round_id))


@router.get("/api/rounds/{round_id}/replay")
async def round_replay(round_id: str, request: Request) -> dict[str, Any]:
    return _replay(await _members_round(request, round_id), with_room=True)


@router.get("/api/rounds/{round_id}/verify")
async def round_verify(round_id: str, request: Request) -> dict[str, Any]:
    return await _verify(await _members_round(request, round_id), with_room=True)


@router.post("/api/rooms/{code}/history/share", status_code=201)
async def share_history(code: str, request: Request) -> dict[str, Any]:
    """The host shares the night's record: ``{"share": id, "url": "/api/shared/<id>"}``, the
    same id every time for this room."""
    token = _bearer(request)
    room_code = normalize_code(code)
    found = await _membership(request, room_code, token)
    if found is None:
        raise ApiError(403, FORBIDDEN, "this token is not one of this room's")
    room, member = found
    if member.id != room.host:
        raise ApiError(403, Err.NOT_HOST, "only the host shares the room's record")
    now = parts.clock(request).now_ms()
    share_id = await share_room(_sessions(request), room.code, _since(room), now)
    return {"share": share_id, "url": f"/api/shared/{share_id}"}


# -- a share's -----------------------------------------------------------------------------------

@router.get("/api/shared/{share_id}")
async def shared_history(share_id: str, request: Request) -> dict[str, Any]:
    share = await _share(request, share_id)
    record = await room_history(_sessions(request), share.room_code, since_ms=share.since_ms,
                                with_room=False)
    return record or {"matches": []}


@router.get("/api/shared/{share_id}/rounds/{round_id}")
async def shared_round(share_id: str, round_id: str, request: Request) -> dict[str, Any]:
    return round_summary(await _shared_round(request, share_id, round_id), with_room=False)


@router.get("/api/shared/{share_id}/rounds/{round_id}/replay")
async def shared_replay(share_id: str, round_id: str, request: Request) -> dict[str, Any]:
    return _replay(await _shared_round(request, share_id, round_id), with_room=False)


@router.get("/api/shared/{share_id}/rounds/{round_id}/verify")
async def shared_verify(share_id: str, round_id: str, request: Request) -> dict[str, Any]:
    return await _verify(await _shared_round(request, share_id, round_id), with_room=False)
