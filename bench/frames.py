"""What making one WebSocket text frame costs: ``python -m bench.frames [--size 500]``.

The library's way (websockets' sans-I/O ``send_text`` then ``data_to_send``, as uvicorn's
``send`` does it) against ``app.transport.asgi.text_frames``, which the server uses when no extension
is negotiated. Prints microseconds per frame, the best of five timings.
"""

from __future__ import annotations

import argparse
import timeit

from websockets.protocol import State
from websockets.server import ServerProtocol

from app.transport.asgi import text_frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=500, help="payload bytes (a patch is ~300-900)")
    parser.add_argument("--number", type=int, default=100_000)
    args = parser.parse_args()
    conn = ServerProtocol()
    conn.state = State.OPEN
    text = "x" * args.size

    def library() -> bytes:
        conn.send_text(text.encode())
        return b"".join(conn.data_to_send())

    def ours() -> bytes:
        return text_frames((text,))

    assert library() == ours(), "the two framings differ"
    for name, make in (("websockets send_text + data_to_send", library), ("app text_frames", ours)):
        best = min(timeit.repeat(make, number=args.number, repeat=5)) / args.number
        print(f"{name:38} {best * 1e6:6.2f} us per {args.size}-byte frame")


if __name__ == "__main__":
    main()
