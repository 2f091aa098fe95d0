"""Bare WebSocket echoes, the ceiling the load benchmark compares the game against. Served only
by the benchmark's server (``python -m bench.serve``), never by ``mercyless serve``.

``/ws-echo`` is served the way the game's sockets are (plain ASGI ahead of FastAPI's router,
app.transport.asgi), so the ceiling is the same stack; ``/ws-echo-fastapi`` goes through a FastAPI
router and Starlette's ``WebSocket`` (a bare FastAPI echo), for comparison.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, WebSocket
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect

from app.transport.asgi import RawSocket, route_path

PATH = "/ws-echo"
FASTAPI_PATH = "/ws-echo-fastapi"

routed = FastAPI()


async def serve(ws: RawSocket) -> None:
    await ws.accept()
    receive, send_text = ws.receive, ws.send_text
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return
        await send_text(message.get("text") or "")


@routed.websocket(FASTAPI_PATH)
async def echo(ws: WebSocket) -> None:
    await ws.accept()
    try:
        while True:
            await ws.send_text(await ws.receive_text())
    except (WebSocketDisconnect, RuntimeError):
        return


class WithEchoes:
    """The game's app with the two echoes in front of it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __getattr__(self, name: str) -> Any:  # ``stopping``, ``state``: the game app's own
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            path = route_path(scope)
            if path == PATH:
                await serve(RawSocket(scope, receive, send))
                return
            if path == FASTAPI_PATH:
                await routed(scope, receive, send)
                return
        await self.app(scope, receive, send)
