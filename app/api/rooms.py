"""HTTP routes (protocol.md "HTTP"). Errors are ``{"error": {"code", "message"}}``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from redis.exceptions import RedisError

from app.api import parts
from app.core.codes import clean_name, new_code, normalize_code
from app.core.protocol import Err
from app.rooms import commands, lobby
from app.rooms.model import Room, summary
from app.rooms.outcomes import Refused
from app.storage.store import Stale
from engine import rules_catalog

router = APIRouter()


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = str(code)
        self.message = message
        self.headers = headers


def error_response(status: int, code: str, message: str,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


class CreateRoom(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    rules: dict[str, Any] = {}


class JoinRoom(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    watch: bool = False  # a spectator, in the lobby too (a full room offers it)


class WatchRoom(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "TV"
    # the token this screen held before, if any: a screen the host removed is barred by it
    token: str | None = Field(default=None, max_length=64)


def _name(raw: str) -> str:
    name = clean_name(raw)
    if name is None:
        raise ApiError(400, Err.BAD_NAME, "names are 1-24 printable characters, at least one of them visible")
    return name


def _address(request: Request) -> str:
    return request.client.host if request.client else "?"


@router.post("/api/rooms", status_code=201)
async def create_room(body: CreateRoom, request: Request) -> dict[str, Any]:
    settings, quotas = parts.settings(request), parts.quotas(request)
    name = _name(body.name)
    now = parts.clock(request).now_ms()
    wait = await quotas.retry_after("rooms", _address(request), settings.rooms_per_min)
    if wait:
        raise ApiError(429, Err.RATE_LIMITED, "too many new rooms from here: wait a minute",
                       headers={"Retry-After": str(wait)})
    if not await quotas.room_fits(now, settings.max_rooms):
        raise ApiError(503, Err.SERVER_FULL, "this server holds as many rooms as it may: try later")
    # a room keeps where its members came from by network, as the limits count them: a removed
    # player is barred from their whole /64, not from one of its 2^64 addresses
    network = parts.limits(request).network(_address(request))
    for _ in range(20):
        code = new_code()
        try:
            room, pid, token = lobby.new_room(code, name, body.rules, now, network)
        except Refused as refused:
            raise ApiError(400, refused.code, refused.message) from None
        room.version = 1
        try:
            await parts.store(request).commit(code, None, 1, room.document(),
                                              ttl_ms=settings.unclaimed_room_ttl_ms)
        except Stale:
            continue  # the code is taken: draw another
        except RedisError:
            raise ApiError(503, Err.UNAVAILABLE, "storage unavailable, try again") from None
        return {"code": code, "player_id": pid, "token": token}
    raise ApiError(503, Err.UNAVAILABLE, "could not allocate a room code")


@router.post("/api/rooms/{code}/join")
async def join_room(code: str, body: JoinRoom, request: Request) -> dict[str, Any]:
    return await _join(code, _name(body.name), request, screen=False, watch=body.watch)


@router.post("/api/rooms/{code}/watch")
async def watch_room(code: str, body: WatchRoom, request: Request) -> dict[str, Any]:
    """A big screen (/tv/CODE) joins as a spectator, in the lobby too: it never takes a seat,
    never hosts, sees what every spectator sees (docs/server.md "Protocol additions")."""
    return await _join(code, _name(body.name), request, screen=True, screen_token=body.token)


async def _join(code: str, name: str, request: Request, screen: bool,
                screen_token: str | None = None, watch: bool = False) -> dict[str, Any]:
    settings, limits = parts.settings(request), parts.limits(request)
    ip = _address(request)
    if await limits.joins_blocked(ip):
        raise ApiError(429, Err.RATE_LIMITED, "too many failed joins: wait a minute")
    if not await parts.quotas(request).take("joins", ip, settings.joins_per_min):
        raise ApiError(429, Err.RATE_LIMITED, "too many joins from here: wait a minute")
    room_code = normalize_code(code)
    if room_code is None:
        await limits.join_failed(ip)
        raise ApiError(404, Err.ROOM_NOT_FOUND, "no room with that code")
    result: dict[str, Any] = {}
    joining = commands.command("join", name, limits.network(ip), settings, result, screen, screen_token,
                               watch)
    answer = await parts.submit(request)(room_code, joining)
    if answer["type"] == "error":
        if answer["code"] == Err.ROOM_NOT_FOUND:
            await limits.join_failed(ip)
        status = {Err.ROOM_NOT_FOUND: 404, Err.ROOM_FULL: 409, Err.NAME_TAKEN: 409, Err.ROOM_LOCKED: 403,
                  Err.BARRED: 403, Err.UNAVAILABLE: 503}.get(answer["code"], 400)
        raise ApiError(status, answer["code"], answer["message"])
    return result


@router.get("/api/rooms/{code}")
async def get_room(code: str, request: Request) -> dict[str, Any]:
    limits = parts.limits(request)
    ip = _address(request)
    if await limits.joins_blocked(ip):  # a code looked up is a code tried: no walking
        raise ApiError(429, Err.RATE_LIMITED, "too many failed joins: wait a minute")
    wait = await parts.quotas(request).retry_after("lookups", ip, parts.settings(request).lookups_per_min)
    if wait:  # found or not: each look-up is a try at a code, and costs a load
        raise ApiError(429, Err.RATE_LIMITED, "too many room look-ups from here: wait a minute",
                       headers={"Retry-After": str(wait)})
    room_code = normalize_code(code)
    found = await parts.store(request).load(room_code) if room_code else None
    if found is None:
        await limits.join_failed(ip)
        raise ApiError(404, Err.ROOM_NOT_FOUND, "no room with that code")
    _version, document = found
    return summary(Room.from_dict(document))


@router.get("/api/rules")
async def get_rules() -> dict[str, Any]:
    return rules_catalog()


@router.get("/healthz")
async def healthz() -> dict[str, Any]:
    return {"ok": True}


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    checks: dict[str, bool] = {}
    try:
        checks["store"] = await parts.store(request).ping()
    except (RedisError, OSError):
        checks["store"] = False
    db = getattr(request.app.state, "db", None)
    try:
        async with db.connect() as connection:
            await connection.exec_driver_sql("SELECT 1")
        checks["database"] = True
    except Exception:
        checks["database"] = False
    ready = all(checks.values())
    return JSONResponse({"ready": ready, **checks}, status_code=200 if ready else 503)
