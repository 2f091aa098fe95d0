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
    verifying = sub.add_parser("verify", help="deal a finished round again from its seed and check it is "
                                "the round that was played (exit 0 fair, 1 mismatch, 2 bad input)")
    verifying.add_argument("round_id", nargs="?", help="the round's id (its page in the history shows it)")
    verifying.add_argument("--file", help="a round's record as JSON (GET /api/rounds/ID/verify) instead")
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.host, args.port)
    elif args.command == "repair":
        from pathlib import Path

        from app.core.settings import get_settings
        from app.storage.repair import repair

        sys.exit(repair(Path(args.store or get_settings().embedded_store), discard=args.discard))
    elif args.command == "verify":
        from app.cli_verify import run

        sys.exit(run(args.round_id, args.file))
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
    # store is stopped after the app's last commits, and then the process ends by the signal
    # as it would have (its exit status says so)
    previous = signal.signal(signal.SIGTERM, _stopped)
    stopped_by = None
    try:
        _run(settings, wrap)
    except _Stopped as stop:
        stopped_by = stop.signum
    finally:
        signal.signal(signal.SIGTERM, previous)
        if embedded is not None:
            embedded.stop()
    if stopped_by is not None:
        signal.signal(stopped_by, signal.SIG_DFL)
        signal.raise_signal(stopped_by)


class _Stopped(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stopped(signum: int, frame: Any) -> None:
    raise _Stopped(signum)


#: File descriptors kept for what is not a client: Redis's pool (REDIS_MAX_CONNECTIONS, on top),
#: its subscriptions, the database's pool, the embedded store, log files, the loop's own.
FD_RESERVE = 128


def open_files_limit() -> tuple[int | None, int | None]:
    """Raise the soft limit of open files to the hard one where the system allows (1,024 soft is
    common, and every socket is one): the limit before and now, ``None`` for none."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: no such limit
        return None, None
    unlimited = resource.RLIM_INFINITY
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    before = soft
    # macOS's hard limit is "unlimited", but setrlimit refuses more than the kernel's own cap
    for target in ([hard] if hard != unlimited else [1 << 20, 65_536, 10_240]):
        if soft == unlimited or target <= soft:
            break
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            continue
        soft = target
        break
    return (None if before == unlimited else before), (None if soft == unlimited else soft)


def connection_limits(settings: Any, open_files: int | None) -> tuple[int | None, int]:
    """uvicorn's ``limit_concurrency`` (``None``: none) and the cap on pending handshakes in all:
    past the descriptors a process has, accept() fails and the listening socket goes deaf, so
    requests get a 503 before that, and silent connections hold at most a quarter of them."""
    limit = settings.max_connections
    if limit is None:
        reserve = FD_RESERVE + settings.redis_max_connections + 4 * settings.bot_workers
        limit = None if open_files is None else max(64, open_files - reserve)
    limit = limit or None  # 0: no limit
    pending = settings.max_pending_handshakes
    if limit is not None and pending:  # (0: no limit, as it says)
        pending = min(pending, max(1, limit // 4))
    return limit, pending


def _run(settings: Any, wrap: Callable[[Any], Any] | None) -> None:
    import logging

    import uvicorn

    from app.api.edge import PendingHandshakes, guarded_protocol, trusted_peers
    from app.core.networks import network_key
    from app.main import create_app
    from app.transport.keepalive import protocol_class
    from app.transport.serving import QuietServer

    host, port = settings.listen_host, settings.listen_port
    was, open_files = open_files_limit()
    limit_concurrency, max_pending = connection_limits(settings, open_files)
    # a hard limit this low caps the sockets of a game night's city: said louder
    level = logging.WARNING if open_files is not None and open_files < 4096 else logging.INFO
    logging.getLogger("mercyless").log(
        level, "open files: %s (was %s); connections at once: %s; pending handshakes: %s, %s per address",
        open_files or "unlimited", was or "unlimited", limit_concurrency or "unlimited",
        max_pending or "unlimited", settings.pending_handshakes_per_ip or "unlimited",
        extra={"open_files": open_files, "open_files_before": was, "limit_concurrency": limit_concurrency,
               "max_pending_handshakes": max_pending})
    pending = PendingHandshakes(settings.pending_handshakes_per_ip, max_pending, key=network_key(settings),
                                trusted=trusted_peers(settings.forwarded_allow_ips))
    app = create_app(settings)
    print(_where(settings), flush=True)
    config = uvicorn.Config(
        wrap(app) if wrap else app, host=host, port=port, log_level=settings.log_level.lower(),
        # the sans-I/O implementation by name, not "auto" (which picks the legacy one before
        # uvicorn 0.50): the one the benchmarks measure, and the one RawSocket.write_frames uses
        # (with a keepalive that pings only a socket gone quiet: app/transport/keepalive.py)
        ws=protocol_class(), ws_max_size=settings.max_frame_bytes, ws_per_message_deflate=False,
        ws_ping_interval=settings.ws_ping_interval_s, ws_ping_timeout=settings.ws_ping_timeout_s,
        timeout_graceful_shutdown=5, access_log=False,
        # the client's address from X-Forwarded-For only when the peer is a proxy the
        # deployment trusts (FORWARDED_ALLOW_IPS; the per-address limits count by it)
        proxy_headers=True, forwarded_allow_ips=settings.forwarded_allow_ips,
        # httptools, with a deadline for each request to arrive, a bound on its head and on the
        # connections whose head has not come (app/api/edge.py); the body's bound is the app's
        # (MAX_BODY_BYTES)
        http=guarded_protocol(settings.request_read_timeout_s, settings.max_header_bytes, pending),
        # past the process's descriptors a request gets 503 rather than a deaf listening socket;
        # derived from the open-files limit, so a city of open WebSockets fits (MAX_CONNECTIONS)
        limit_concurrency=limit_concurrency, backlog=settings.listen_backlog)
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
