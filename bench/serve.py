"""``python -m bench.serve --port N``: the server as ``mercyless serve`` runs it, with the load
benchmark's echoes (bench/echo.py) in front."""

from __future__ import annotations

import argparse

from app.cli import serve
from bench.echo import WithEchoes


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.serve")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    serve(args.host, args.port, wrap=WithEchoes)


if __name__ == "__main__":
    main()
