"""The invite: where friends can open this server, and a QR code of a link for their phones.

The server's addresses (every interface's, when it listens on all) are for a room's members:
``/api/invite`` asks for a credential of the room as the history does (app/api/history.py)."""

from __future__ import annotations

import asyncio
import io
from functools import lru_cache
from typing import Any

import segno
from fastapi import APIRouter, Query, Request, Response

from app.api import parts
from app.api.history import FORBIDDEN, _bearer, _membership
from app.api.rooms import ApiError
from app.core.addresses import reachable_urls
from app.core.codes import normalize_code
from app.core.protocol import Err

router = APIRouter()
#: the text's UTF-8 bytes (an invite link is ~40): drawing costs ~20-150 ms of pure Python at
#: this size, so it is bounded in bytes, not characters, and counted per address
QR_TEXT_MAX = 512


@lru_cache(maxsize=64)  # a room's guests ask for the same invite link's code
def qr_svg(text: str) -> bytes:
    """A standalone SVG document (with its namespace: a browser draws it in an ``<img>``)."""
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="svg", xmldecl=False, scale=4, border=2, dark="#111",
                                     light="#fff")
    return out.getvalue()


@router.get("/api/invite")
async def invite(request: Request, code: str = Query(default="", max_length=32)) -> dict[str, Any]:
    """``urls``: the base URLs others can open (``PUBLIC_URL``, else the host's addresses when
    the server listens on all interfaces); ``local_only``: none, only this computer can. For a
    member of the room ``code`` (``Authorization: Bearer <token>``): 401 without a token, 403
    for one that is not the room's (or no such room: the same answer)."""
    token = _bearer(request)
    room_code = normalize_code(code)
    if await _membership(request, room_code, token) is None:
        raise ApiError(403, FORBIDDEN, "this token is not one of this room's")
    settings = parts.settings(request)
    urls = reachable_urls(settings.listen_host, settings.listen_port, settings.public_url)
    return {"urls": urls, "local_only": not urls}


@router.get("/api/qr.svg", include_in_schema=False)
async def qr_code(request: Request, text: str = Query(min_length=1, max_length=QR_TEXT_MAX)) -> Response:
    """``text`` as a QR code (SVG): the lobby shows the invite link this way. Drawing one is
    pure Python: it runs in a thread (the loop keeps its turns, the GIL switching every few
    ms), a text's bytes are bounded and an address may ask for ``QR_PER_MIN`` a minute."""
    if len(text.encode("utf-8", "surrogatepass")) > QR_TEXT_MAX:
        raise ApiError(400, Err.BAD_MESSAGE, f"text: at most {QR_TEXT_MAX} bytes")
    address = request.client.host if request.client else "?"
    if not await parts.quotas(request).take("qr", address, parts.settings(request).qr_per_min):
        raise ApiError(429, Err.RATE_LIMITED, "too many QR codes from here: wait a minute")
    return Response(await asyncio.to_thread(qr_svg, text), media_type="image/svg+xml",
                    headers={"Cache-Control": "public, max-age=86400"})
