"""``/ws-echo``: a bare WebSocket echo on the same stack, the ceiling the load benchmark compares
the game against. Mounted only with ``BENCH_ECHO=true``."""

from __future__ import annotations

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect

router = APIRouter()


@router.websocket("/ws-echo")
async def echo(ws: WebSocket) -> None:
    await ws.accept()
    try:
        while True:
            await ws.send_text(await ws.receive_text())
    except (WebSocketDisconnect, RuntimeError):
        return
