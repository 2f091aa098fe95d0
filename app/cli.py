"""``mercyless serve [--host 127.0.0.1] [--port 8000]`` (also ``python -m app``)."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="mercyless")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    sub.add_parser("migrate", help="upgrade the database schema to the latest revision")
    args = parser.parse_args(argv)
    if args.command == "serve":
        _serve(args.host, args.port)
    elif args.command == "migrate":
        from .db import upgrade_sync
        from .settings import get_settings

        url = get_settings().database_url
        upgrade_sync(url)
        print(f"database at head: {url.split('@')[-1]}")


def _serve(host: str, port: int) -> None:
    import uvicorn

    from .main import create_app
    from .serving import QuietServer
    from .settings import get_settings

    settings = get_settings()
    print(f"Mercyless is starting: open http://{host}:{port}/ in your browser", flush=True)
    config = uvicorn.Config(
        create_app(settings), host=host, port=port, log_level=settings.log_level.lower(),
        # the sans-I/O implementation by name, not "auto" (which picks the legacy one before
        # uvicorn 0.50): the one the benchmarks measure, and the one RawSocket.write_frames uses
        ws="websockets-sansio", ws_max_size=settings.max_frame_bytes, ws_per_message_deflate=False,
        ws_ping_interval=settings.ws_ping_interval_s, ws_ping_timeout=settings.ws_ping_timeout_s,
        timeout_graceful_shutdown=5, access_log=False, proxy_headers=True)
    server = QuietServer(config)
    server.run()
    if not server.started:  # as uvicorn.run: the port was taken, the app failed to start
        sys.exit(3)


if __name__ == "__main__":  # pragma: no cover
    main()
