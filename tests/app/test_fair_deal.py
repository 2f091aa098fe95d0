"""A fair deal anyone can check (protocol.md "Fair deal"), black-box over real sockets: the deal
is committed to (the SHA-256 of its seed) in ``started`` and ``game`` from the first message,
the seed is shown in ``round_over`` and ``game`` once the round is over and not before, and the
engine deals the same round again from it: the same first top card, the same hands."""

from __future__ import annotations

import hashlib

from engine import make_rules, new_game

from .harness import ServerProcess
from .tables import level, ok, started

RULES = {"deck": {"r-5": 12, "g-6": 12, "b-7": 12, "y-8": 12}, "hand_size": 2, "turn_timer_s": 0,
         "catch_window_s": 30}


def _events(client, kind):
    return [e for m in client.messages if m["type"] in ("patch", "welcome")
            for e in (m["events"] if m["type"] == "patch" else m["log"]) if e["kind"] == kind]


async def test_the_deal_is_committed_at_the_start_revealed_at_the_end_and_deals_again_the_same():
    server = ServerProcess().start()
    try:
        ann, bob = await started(server, ["Ann", "Bob"], RULES)
        commitment = ann.view["game"]["deal_commitment"]
        assert len(commitment) == 64 and bob.view["game"]["deal_commitment"] == commitment
        (begun,) = _events(ann, "started")
        assert begun["deal_commitment"] == commitment
        hands = {ann.you: list(ann.view["hand"]), bob.you: list(bob.view["hand"])}
        top, dealer = ann.view["game"]["top"], ann.view["game"]["dealer"]
        seats = [p["id"] for p in ann.view["players"]]
        # nothing before the round is over carries the seed
        assert not _events(ann, "round_over") and "deal_seed" not in ann.view["game"]
        while ann.view["game"]["winner"] is None:
            mover = ann if ann.my_turn() else bob
            legal, pending = mover.game["legal"], mover.game.get("pending")
            if pending and legal["choose"]:  # a 7's target, a wild's colour, a Discard All's top
                field = pending["choice"] if pending["choice"] in ("target", "top") else "color"
                move = {"type": "choose", field: legal["choose"][0]}
            else:
                move = ({"type": "play", "card": legal["play"][0], "uno": len(mover.view["hand"]) == 2}
                        if legal["play"] else {"type": "draw"} if legal["draw"] else {"type": "pass"})
            await ok(mover, move)
            await level([ann, bob])
        (over,) = _events(ann, "round_over")
        seed = over["deal_seed"]
        assert ann.view["game"]["deal_seed"] == bob.view["game"]["deal_seed"] == seed
        assert hashlib.sha256(seed.encode("utf-8")).hexdigest() == commitment
        # dealt again from the seed, the same rules, the same seat order and dealer
        state, _ = new_game(seats, make_rules(ann.view["room"]["rules"]), seed, dealer=seats.index(dealer))
        assert state.discard[-1] == top
        assert {pid: sorted(state.hands[i]) for i, pid in enumerate(seats)} == {
            pid: sorted(hand) for pid, hand in hands.items()}
        for c in (ann, bob):
            await c.close()
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]
