"""``mercyless serve [--host 127.0.0.1] [--port 8000]`` (also ``python -m app``)."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from collections.abc import Callable
from typing import Any


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="mercyless")
    sub = parser.add_subparsers(dest="command", required=True)
    serving = sub.add_parser("serve", help="run the server")
    serving.add_argument("--host", default="127.0.0.1")
    serving.add_argument("--port", type=int, default=8000)
    sub.add_parser("migrate", help="upgrade the database schema to the latest revision")
    repairing = sub.add_parser("repair", help="check the embedded room store's files and cut a damaged "
                               "tail away (a copy of them is kept)")
    repairing.add_argument("--store", help="the store's folder (default: EMBEDDED_STORE)")
    repairing.add_argument("--discard", action="store_true",
                           help="set the store's files aside and start with an empty store")
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.host, args.port)
    elif args.command == "repair":
        from pathlib import Path

        from app.core.settings import get_settings
        from app.storage.repair import repair

        sys.exit(repair(Path(args.store or get_settings().embedded_store), discard=args.discard))
    elif args.command == "migrate":
        from app.core.settings import get_settings
        from app.history.db import upgrade_sync

        url = get_settings().database_url
        upgrade_sync(url)
        print(f"database at head: {url.split('@')[-1]}")


def serve(host: str, port: int, wrap: Callable[[Any], Any] | None = None) -> None:
    """Run the server until it is stopped; ``wrap`` puts an ASGI layer around the app (the
    benchmarks' echoes, bench/serve.py)."""
    from app.core.logs import setup_logging
    from app.core.settings import get_settings
    from app.main import with_embedded_store
    from app.storage.embedded import StoreRefused

    settings = get_settings().model_copy(update={"listen_host": host, "listen_port": port})
    setup_logging(settings.log_level)
    try:  # started here, not in the app's start-up, so a refusal reads as a message, not a traceback
        settings, embedded = with_embedded_store(settings)
    except StoreRefused as refused:
        print(f"Mercyless cannot start: {refused}", file=sys.stderr, flush=True)
        sys.exit(2)
    # uvicorn raises the stop signal again once it has shut down; caught here, so that the
    # store is stopped after the app's last commits instead of the process dying first
    previous = signal.signal(signal.SIGTERM, _stopped)
    try:
        _run(settings, wrap)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if embedded is not None:
            embedded.stop()


def _stopped(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _run(settings: Any, wrap: Callable[[Any], Any] | None) -> None:
    import uvicorn

    from app.api.edge import guarded_protocol
    from app.main import create_app
    from app.transport.serving import QuietServer

    host, port = settings.listen_host, settings.listen_port
    app = create_app(settings)
    print(_where(settings), flush=True)
    config = uvicorn.Config(
        wrap(app) if wrap else app, host=host, port=port, log_level=settings.log_level.lower(),
        # the sans-I/O implementation by name, not "auto" (which picks the legacy one before
        # uvicorn 0.50): the one the benchmarks measure, and the one RawSocket.write_frames uses
        ws="websockets-sansio", ws_max_size=settings.max_frame_bytes, ws_per_message_deflate=False,
        ws_ping_interval=settings.ws_ping_interval_s, ws_ping_timeout=settings.ws_ping_timeout_s,
        timeout_graceful_shutdown=5, access_log=False,
        # the client's address from X-Forwarded-For only when the peer is a proxy the
        # deployment trusts (FORWARDED_ALLOW_IPS; the per-address limits count by it)
        proxy_headers=True, forwarded_allow_ips=settings.forwarded_allow_ips,
        # httptools, with a deadline for each request to arrive and a bound on its head
        # (app/api/edge.py); the body's bound is the app's (MAX_BODY_BYTES)
        http=guarded_protocol(settings.request_read_timeout_s, settings.max_header_bytes))
    server = QuietServer(config)
    # uvicorn raises a captured SIGINT (Ctrl-C) again once it has shut down gracefully; the
    # KeyboardInterrupt that becomes is the stop asked for, not an error (as uvicorn.run has it)
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:  # as uvicorn.run: the port was taken, the app failed to start
        sys.exit(3)


def _where(settings: Any) -> str:
    """What the console says at start: where to open the server, and who else can."""
    from app.core.addresses import LOOPBACK_HOSTS, reachable_urls

    host, port = settings.listen_host, settings.listen_port
    here = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    lines = [f"Mercyless is starting: open http://{here if ':' not in here else f'[{here}]'}:{port}/ "
             "in your browser"]
    others = reachable_urls(host, port, settings.public_url)
    if others:
        lines.append("Friends can open: " + ", ".join(f"{url}/" for url in others))
    elif host in LOOPBACK_HOSTS:
        lines.append("Only this computer can open it. To let friends on the same Wi-Fi join, start it "
                     "with --host 0.0.0.0 (scripts/serve.sh --host 0.0.0.0); for the internet, see "
                     "docs/deploy.md")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    main()
