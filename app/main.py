"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.types import Receive, Scope, Send

from app.api import deals as api_deals
from app.api import history as api_history
from app.api import invite as api_invite
from app.api import rooms as api
from app.api.app_shell import Shell, ShellFiles, shell_router
from app.api.edge import HttpEdge
from app.api.rooms import ApiError, error_response
from app.core.addresses import HostAllowList
from app.core.clock import Clock
from app.core.codes import read_look_alikes
from app.core.gc_pacing import paced_collector
from app.core.logs import setup_logging
from app.core.metrics import Metrics
from app.core.paths import WEB_DIR
from app.core.protocol import Close, Err
from app.core.settings import Settings, get_settings
from app.history.db import make_engine, sessions, upgrade
from app.history.writer import HistoryWriter
from app.processes.hub import Hub
from app.storage.embedded import EmbeddedStore
from app.storage.store import RoomStore, open_redis
from app.transport import session as ws
from app.transport.admission import Admission, restart_spread_ms, spread_reason
from app.transport.asgi import RawSocket, game_socket_code
from app.transport.parts import SocketParts
from app.transport.relay import Relay

log = logging.getLogger("mercyless")

#: Middle-generation collections between two full ones (CPython's default: 10).
FULL_COLLECTION_EVERY = 100


class MercylessApp(FastAPI):
    """FastAPI, with the game's sockets (``/ws/{code}``) answered before its middleware and
    router: a socket is open for a whole game night, and each layer it would wait in costs
    memory, collector time and a hop per frame (app.transport.asgi). Middleware added to this app
    therefore does not see game sockets. Every other request passes the HTTP edge first
    (app.api.edge: security headers on every answer, the Host, the body's size); a WebSocket
    meets the edge's Host check before anything else (DNS rebinding)."""

    edge: HttpEdge | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and self.edge is not None and not self.edge.host_allowed(scope):
            await self.edge.refuse_socket(scope, send)
            return
        code = game_socket_code(scope)
        if code is not None:
            await ws.serve(RawSocket(scope, receive, send), self.state.socket_parts, code)
        elif self.edge is not None and scope["type"] == "http":
            await self.edge(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    async def _routed(self, scope: Scope, receive: Receive, send: Send) -> None:
        await super().__call__(scope, receive, send)

    def stopping(self) -> None:
        """The server got its stop signal and is about to close the sockets (app.transport.serving)."""
        hub = getattr(self.state, "hub", None)
        if hub is not None:
            hub.stopping()

    async def closing(self) -> None:
        """After ``stopping``, before uvicorn closes every socket alike (1012, no reason): the
        phones are told how long to spread their return over, so that a restart under
        thousands does not bring them all back in the same second (app/transport/admission.py)."""
        hub = getattr(self.state, "hub", None)
        if hub is None:
            return
        conns = [conn for room in hub.sockets.values() for conn in room.values()]
        spread = restart_spread_ms(len(conns), hub.settings.welcomes_per_s)
        hub.sockets.close_all(Close.RESTART, spread_reason(spread))
        await asyncio.gather(*(conn.wait_closed() for conn in conns if hasattr(conn, "wait_closed")))


def with_embedded_store(settings: Settings) -> tuple[Settings, EmbeddedStore | None]:
    """``settings`` as they are when ``REDIS_URL`` names a Redis; else the embedded store started
    (app/storage/embedded.py: raises StoreRefused) and ``settings`` with its URL."""
    if settings.redis_url:
        return settings, None
    store = EmbeddedStore(settings.embedded_store or None, settings.embedded_fsync,
                          settings.embedded_rewrite_min_mb)
    url = store.start()
    return settings.model_copy(update={"redis_url": url}), store


def create_app(settings: Settings | None = None, clock: Clock | None = None) -> MercylessApp:
    settings = given = settings or get_settings()
    setup_logging(settings.log_level)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # the embedded store, unless the server's command started it already (app/cli.py)
        settings, embedded = with_embedded_store(given)
        redis, close_redis = open_redis(settings)
        store = RoomStore(redis, settings.key_prefix, settings.room_ttl_ms, settings.answers_kept,
                          url=settings.redis_url, settings=settings)
        db = make_engine(settings.database_url)
        app.state.db = db
        app.state.db_sessions = sessions(db)
        metrics = Metrics()
        writer = HistoryWriter(store, metrics, app.state.db_sessions, gather_ms=settings.history_gather_ms)
        hub = Hub(settings, store, clock or Clock(settings.clock_speed),
                  publishes=settings.redis_url is not None, metrics=metrics, history=writer,
                  make_relay=(lambda: Relay(socket_parts)) if settings.relay_sockets else None)
        app.state.hub = hub
        # what the routes use, each by itself (app/api/parts.py)
        app.state.settings, app.state.store, app.state.clock = settings, store, hub.clock
        app.state.quotas, app.state.limits, app.state.submit = hub.quotas, hub.limits, hub.submit
        # and what a socket uses (app/transport/parts.py)
        socket_parts = app.state.socket_parts = SocketParts(
            hub, settings, hub.clock, store, hub.limits, hub.quotas, metrics,
            Admission(settings.hellos_at_once, settings.hello_queue, per_s=settings.welcomes_per_s))
        await hub.start()
        try:
            await upgrade(settings.database_url)
        except Exception:  # the game goes on without history until the database is back
            log.warning("database not migrated at start; history will wait", exc_info=True)
        writer_task = asyncio.create_task(writer.run(), name="history")
        read_look_alikes()  # before the first join (name_key), and kept out of the collector's walks
        # everything alive now (the libraries' objects, ~125k) is left out of the cyclic
        # collector's walks: a full collection under 250 rooms paused the loop ~160 ms, ~85 ms
        # after this (docs/benchmarks.md)
        gc.collect()
        gc.freeze()
        # and, with the loop not pacing the collector (GC_PACED=false, app/core/gc_pacing.py), full
        # collections come 10x less often: what they walk is the players' sockets
        # and views (~100 objects a player), which live for hours and are no garbage; each one
        # pauses every room of the process (65-80 ms over 1,000 players), and at the default
        # they came every 5-10 s under play. Young collections stay as they were.
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)
        log.info("mercyless ready", extra={"redis": settings.redis_url.rpartition("@")[2]})
        try:
            async with paced_collector(settings.gc_paced, observe=hub.metrics.gc_pause,
                                       late=hub.metrics.loop_late) as pacer:
                app.state.gc_pacer = pacer
                yield
        finally:
            await writer.stop(writer_task)
            await hub.stop()
            await close_redis()
            await db.dispose()
            if embedded is not None:
                embedded.stop()

    # the API's generated pages only when asked for (API_DOCS): they list every route to anyone
    docs = settings.api_docs
    app = MercylessApp(title="Mercyless", version="0.1.0", lifespan=lifespan,
                       docs_url="/docs" if docs else None, redoc_url="/redoc" if docs else None,
                       openapi_url="/openapi.json" if docs else None)
    app.state.settings = settings
    app.edge = HttpEdge(app._routed, settings.max_body_bytes,
                        HostAllowList(settings.listen_host, settings.public_url, settings.allowed_hosts))
    app.include_router(api.router)
    app.include_router(api_history.router)
    app.include_router(api_deals.router)
    app.include_router(api_invite.router)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "body"
        return error_response(400, Err.BAD_MESSAGE, f"{where}: {first.get('msg', 'invalid')}"[:200])

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}.get(exc.status_code,
                                                                                   "http_error")
        response = error_response(exc.status_code, code, str(exc.detail))
        response.headers.update(exc.headers or {})
        return response

    if settings.metrics:  # (METRICS; docs/deploy.md: keep it off the public side)

        @app.get("/metrics", include_in_schema=False)
        async def metrics(request: Request) -> Response:
            body, content_type = request.app.state.hub.metrics.render()
            return Response(body, media_type=content_type)

    index = WEB_DIR / "index.html"

    @app.get("/r/{code:path}", include_in_schema=False)
    async def invite(code: str) -> FileResponse:  # the client says what is wrong with a bad code
        return FileResponse(index)

    @app.get("/tv/{code:path}", include_in_schema=False)
    async def big_screen(code: str) -> FileResponse:  # the big-screen view of a room
        return FileResponse(index)

    if WEB_DIR.is_dir():
        # the service worker and the manifest (app/api/app_shell.py), then every other file
        shell = Shell(WEB_DIR)
        app.include_router(shell_router(shell))
        app.mount("/", ShellFiles(shell), name="web")
    return app
