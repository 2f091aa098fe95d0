"""Bare WebSocket echoes, the ceiling the load benchmark compares the game against. Mounted only
with ``BENCH_ECHO=true``.

``/ws-echo`` is served the way the game's sockets are (plain ASGI ahead of FastAPI's router,
app.socket), so the ceiling is the same stack; ``/ws-echo-fastapi`` goes through FastAPI's
router and Starlette's ``WebSocket`` (the issue's "bare FastAPI echo"), for comparison.
"""

from __future__ import annotations

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect

from .socket import RawSocket

router = APIRouter()
PATH = "/ws-echo"


async def serve(ws: RawSocket) -> None:
    await ws.accept()
    receive, send_text = ws.receive, ws.send_text
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return
        await send_text(message.get("text") or "")


@router.websocket("/ws-echo-fastapi")
async def echo(ws: WebSocket) -> None:
    await ws.accept()
    try:
        while True:
            await ws.send_text(await ws.receive_text())
    except (WebSocketDisconnect, RuntimeError):
        return
