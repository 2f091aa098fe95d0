"""bench.hard_oracle's worlds: the true hands (all, or the next player's only, the others dealt
anew by their counts), the unseen cards in a new order, nothing else changed; and the bot's own
worlds back once the bench is done."""

from __future__ import annotations

import random
from collections import Counter

import engine.ai.hard as hard
import engine.ai.tournament as tournament
from bench import hard_oracle
from engine import apply, autoplay, new_game
from engine.rules import make_rules


def _mid_round():
    rules = make_rules({"preset": "printed", "turn_timer_s": 0})
    state, _ = new_game(["a", "b", "c", "d"], rules, "oracle-test")
    for _ in range(12):
        seat = state.pending.player if state.pending is not None else state.turn
        state = apply(state, state.players[seat], autoplay.auto_action(state, seat), 0).state
    assert state.winner is None
    return state


def _cards(s):
    return Counter([c for h in s.hands for c in h] + s.draw_pile + s.set_aside + s.discard)


def test_the_worlds_know_the_hands_they_are_told_to_and_keep_every_card():
    truth = _mid_round()
    me = truth.players[truth.turn]
    mine = truth.turn
    for seats in ("all", "next", "none"):
        with hard_oracle.oracle_worlds(seats):
            hard_oracle._truth["state"] = truth
            world = hard.determinize({}, me, truth.rules, None, random.Random(7))
        assert _cards(world) == _cards(truth)  # no card made or lost
        assert world.discard == truth.discard and world.turn == truth.turn
        assert [len(h) for h in world.hands] == [len(h) for h in truth.hands]
        assert world.hands[mine] == truth.hands[mine]
        nxt = (mine + truth.direction) % 4
        others = [i for i in range(4) if i not in (mine, nxt)]
        if seats == "all":
            assert world.hands == truth.hands
        if seats == "next":
            assert world.hands[nxt] == truth.hands[nxt]
        if seats in ("next", "none"):  # the others dealt anew
            assert any(Counter(world.hands[i]) != Counter(truth.hands[i]) for i in others)
        assert world.hands is not truth.hands and world.hands[mine] is not truth.hands[mine]
    assert hard.determinize is hard_oracle._determinize
    assert tournament.view_for is hard_oracle._view_for


def test_the_overlap_is_the_share_of_each_true_hand_a_world_holds():
    truth = _mid_round()
    me = truth.players[truth.turn]
    tally: dict[str, list[float]] = {"next": [], "others": []}
    hard_oracle._overlap(truth, truth, me, tally)
    assert tally == {"next": [1.0], "others": [1.0, 1.0]}
    with hard_oracle.oracle_worlds("none"):
        hard_oracle._truth["state"] = truth
        blind = hard.determinize({}, me, truth.rules, None, random.Random(7))
    tally = {"next": [], "others": []}
    hard_oracle._overlap(blind, truth, me, tally)
    nxt = (truth.turn + truth.direction) % 4
    shared = sum((Counter(blind.hands[nxt]) & Counter(truth.hands[nxt])).values())
    assert tally["next"] == [shared / len(truth.hands[nxt])] and len(tally["others"]) == 2
