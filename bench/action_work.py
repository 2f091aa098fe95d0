"""What an action costs the server's Python besides its frames and Redis:
``python -m bench.action_work [--actions 20000] [--repeat 5] [--profile FILE]``.

Four players play whole matches the way the load generator's clients do (a random legal move
from each one's view; the host asks for the rematch), through the server's own code: a client
message's parsing and intent (app.transport.session), the actor's run, commit (the room document, the Redis
command's arguments) and fan-out (four views, four diffs, the patch and ack frames' text).
The sockets and Redis are stand-ins that keep the text and answer at once, so the figure is
the per-action work the server does on top of what the same-stack echo does per frame. The
lowest of ``--repeat`` runs is printed (the others ran on a busier machine). Under
``valgrind --tool=callgrind`` the difference between two ``--actions`` counts is the
instructions per action, which do not drift with the machine's speed.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import random
import secrets
import time
from typing import Any

from app.core.clock import StepClock
from app.core.protocol import dumps, parse_json, parse_message
from app.core.settings import Settings
from app.processes.hub import Hub
from app.rooms import commands, lobby
from app.rooms.actor import RoomActor
from app.rooms.model import Loaded


class StubStore:
    """The room store's commit path, answering at once (the commit's arguments are still made:
    the document, the answer, the record steps)."""

    ttl_ms = 6 * 3600 * 1000

    async def commit(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def set_deadline(self, *args: Any) -> bool:
        return True

    async def remember(self, *args: Any) -> None:  # a refusal's answer: none stored before
        return None


class StubSocket:
    def __init__(self, conn_id: int, player: str) -> None:
        self.id = conn_id
        self.player = player
        self.code = "BENCH"
        self.view: dict[str, Any] | None = None
        self.public: dict[str, Any] | None = None
        self.version = 0
        self.closed = False
        self.frames: list[str | bytes] = []

    def send(self, text: str | bytes) -> None:
        self.frames.append(text)

    def send_frames(self, texts: list[str | bytes]) -> None:
        for text in texts:
            self.send(text)

    def close(self, code: int = 1000) -> None:
        self.closed = True


class Client:
    """A player: it moves from the view the server last sent it (the stand-in socket keeps it,
    so the client parses nothing and the run's time is nearly all the server's)."""

    def __init__(self, conn: StubSocket) -> None:
        self.conn = conn
        self.ids = 0

    def move(self, rng: random.Random) -> str | None:
        """The load generator's choice (bench.loadgen.Player.move) as the frame it would send."""
        view, me = self.conn.view or {}, self.conn.player
        game = view.get("game")
        status = view.get("room", {}).get("status")
        self.ids += 1
        msg: dict[str, Any] | None = None
        if status in ("round_over", "match_over") and view["room"]["host"] == me:
            msg = {"type": "rematch"}
        elif game and status == "playing" and game.get("legal"):
            pending = game.get("pending")
            if (pending["player"] == me) if pending else game["turn"] == me:
                legal = game["legal"]
                if legal["choose"]:
                    field = pending["choice"] if pending["choice"] in ("target", "top") else "color"
                    msg = {"type": "choose", field: rng.choice(legal["choose"])}
                elif legal["play"]:
                    msg = {"type": "play", "card": rng.choice(legal["play"]), "uno": len(view["hand"]) == 2}
                elif legal["draw"]:
                    msg = {"type": "draw"}
                elif legal["pass"]:
                    msg = {"type": "pass"}
        if msg is None:
            return None
        msg["id"] = f"m{self.ids}"
        return dumps(msg)


async def run(actions: int, seed: int) -> float:
    """Seconds of CPU for ``actions`` actions. The same ``seed`` plays the same games (the
    deals' seeds and the players' ids come from it instead of ``secrets``, and the clock moves
    half a second per action), so two versions
    of the server can be compared action for action, e.g. in instructions under callgrind."""
    dealt = random.Random(seed)
    token_hex = secrets.token_hex
    secrets.token_hex = lambda nbytes=None: dealt.randbytes(nbytes or 32).hex()
    try:
        return await _play(actions, seed)
    finally:
        secrets.token_hex = token_hex


async def _play(actions: int, seed: int) -> float:
    settings = Settings(bot_delay_ms=0)
    clock = StepClock()
    hub = Hub(settings, StubStore(), clock, publishes=False)  # type: ignore[arg-type]
    now = clock.ms
    room, host, _ = lobby.new_room("BENCH", "p0", {}, now)
    loaded = Loaded(room)
    for i in range(1, 4):
        lobby.join(loaded, f"p{i}")
    lobby.start(loaded, host, now)
    actor = RoomActor(hub.services, "BENCH")
    actor.task.cancel()
    actor.loaded = loaded
    conns = {seat.id: StubSocket(n, seat.id) for n, seat in enumerate(room.seats)}
    hub.sockets["BENCH"] = conns  # type: ignore[assignment]
    for conn in conns.values():
        actor.welcome(conn)  # type: ignore[arg-type]
    clients = [Client(conn) for conn in conns.values()]
    rng = random.Random(seed)
    spent = 0.0
    cpu = time.process_time
    for _ in range(actions):
        clock.ms += 500
        for client in clients:
            client.conn.frames.clear()
        for client in clients:
            text = client.move(rng)
            if text is not None:
                break
        else:
            raise RuntimeError("nobody can move")
        conn = client.conn
        started = cpu()  # the server's part: the clients' own work is not counted
        intent = commands.intent_for(parse_message(parse_json(text)), conn, settings, reply=conn)  # type: ignore[arg-type]
        await actor._process(intent)  # (the answer goes out behind the patch)
        spent += cpu() - started
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", default=None, help="write a cProfile of one run here")
    args = parser.parse_args()
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(asyncio.run, run(args.actions, 1))
        profiler.dump_stats(args.profile)
        return
    best = min(asyncio.run(run(args.actions, 1)) for _ in range(args.repeat))
    print(f"action work: {best / args.actions * 1e6:.1f} us per action "
          f"(best of {args.repeat} runs of {args.actions} actions, 4 seats)")


if __name__ == "__main__":
    main()
