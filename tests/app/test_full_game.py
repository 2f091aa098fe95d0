"""A complete round over real sockets: 3 human clients + 1 bot, to round over, then a rematch."""

from __future__ import annotations

import asyncio
import random

from .harness import Client


async def _play_round(clients: list[Client], rng: random.Random) -> None:
    async def drive(c: Client) -> None:
        while c.view["room"]["status"] == "playing":
            if c.my_turn():
                answer = await c.play_turn(rng)
                assert answer["type"] in ("ack", "error"), answer
                if answer["type"] == "error":  # the view moved on under us (a bot acted): re-read
                    assert answer["code"] in ("not_your_turn", "choice_pending", "illegal_card",
                                              "stack_pending", "no_choice_pending"), answer
            else:
                await c.until(lambda m: m["type"] in ("patch", "welcome"), timeout=20)

    await asyncio.wait_for(asyncio.gather(*(drive(c) for c in clients)), 120)


async def test_three_humans_and_a_bot_play_to_round_over_then_rematch(server):
    host = server.create("Ann")
    code = host["code"]
    guests = [server.join(code, name) for name in ("Bob", "Cat")]
    clients = [await Client(server, code, host["token"]).connect()]
    for g in guests:
        clients.append(await Client(server, code, g["token"]).connect())
    ann = clients[0]
    assert (await ann.send({"type": "add_bot", "level": "easy"}))["type"] == "ack"
    assert (await ann.send({"type": "start"}))["type"] == "ack"
    for c in clients:
        await c.until_view(lambda v: v["room"]["status"] == "playing")
        assert len(c.view["hand"]) == 7
        assert [p["cards"] for p in c.view["players"]] == [7, 7, 7, 7]
    await _play_round(clients, random.Random(5))
    for c in clients:
        await c.until_view(lambda v: v["room"]["status"] in ("round_over", "match_over"))
        assert c.gaps == 0
    final = ann.view
    winner = final["game"]["winner"]
    assert winner in [p["id"] for p in final["players"]]
    assert any(e["kind"] == "round_over" for e in ann.events)
    # every client converged on the same public state
    for c in clients[1:]:
        await c.until_view(lambda v, c=c: c.version == ann.version, timeout=5)
        assert c.view["players"] == final["players"]
        assert c.view["game"]["winner"] == winner
    # the host starts a rematch: same room, the dealer moves on, scores carry
    dealer_before = final["game"]["dealer"]
    scores_before = {p["id"]: p["score"] for p in final["players"]}
    assert (await ann.send({"type": "rematch"}))["type"] == "ack"
    await ann.until_view(lambda v: v["room"]["status"] == "playing" and v["room"]["round"] == 2)
    assert ann.view["game"]["dealer"] != dealer_before
    if final["room"]["status"] == "round_over":
        assert {p["id"]: p["score"] for p in ann.view["players"]} == scores_before
    for c in clients:
        await c.close()
