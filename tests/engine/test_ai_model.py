"""The ``hard`` bot's model of the ``normal`` table: what a card chosen freely says about the
hand it was chosen from, kept by the memory from public events only, and used by the sampler."""

from __future__ import annotations

import random

from engine import make_rules, new_game, view_for
from engine.ai.determinize import determinize
from engine.ai.memory import Memory
from engine.ai.model import Shown, chose, consistent
from engine.cards import PLAYABLE

from .helpers import normal_rounds

RULES = make_rules({"turn_timer_s": 0})


def _shown(card: str, top: str = "r-5", color: str = "r", **counts: int) -> Shown:
    c = {"nxt": 7, "danger": 7, "incoming": 7, **counts}
    return Shown(card, PLAYABLE[color][top], False, c["nxt"], c["danger"], c["incoming"])


def test_a_number_played_freely_means_no_playable_card_the_heuristic_prefers():
    shown = _shown("r-3")
    assert chose(["r-3", "g-1", "b-2"], shown, RULES)  # nothing else playable
    assert not chose(["r-3", "r-9", "g-1"], shown, RULES)  # the same colour, more points
    assert chose(["r-3", "r-9", "g-1"], _shown("r-9"), RULES)
    assert not chose(["r-3", "r-skip", "g-1"], shown, RULES)  # a skip would have gone first
    assert not chose(["r-3", "g-5", "g-1", "g-2"], shown, RULES)  # the longer colour's 5
    assert not chose(["r-3", "r-draw2"], shown, RULES)  # a small draw card is played gladly
    assert chose(["r-3", "w-wild"], shown, RULES)  # wilds are held


def test_a_stack_answered_with_the_smallest_card_that_does():
    answers = frozenset({"r-draw4", "b-draw4", "w-draw6", "w-draw10", "w-reverse4"})
    big = Shown("w-draw6", answers, True, 7, 7, 7)
    assert chose(["w-draw6", "g-1"], big, RULES)
    assert not chose(["w-draw6", "b-draw4"], big, RULES)
    assert chose(["r-draw4", "w-draw10"], Shown("r-draw4", answers, True, 7, 7, 7), RULES)


def test_consistent_replays_every_play_since_the_last_card_got_oldest_first():
    # b played r-3 (holding the card they play next), then g-3 on it
    first, second = _shown("r-3"), _shown("g-3", top="r-3", color="r")
    assert consistent(["b-1"], [first, second], RULES)
    # had b held r-skip, the r-3 would not have been the heuristic's choice
    assert not consistent(["b-1", "r-skip"], [first, second], RULES)


def test_memory_keeps_plays_with_the_counts_then_and_forgets_them_on_new_cards():
    memory = Memory("a", stacking=RULES.stacking)
    view = view_for(new_game(["a", "b", "c", "d"], RULES, "model-0")[0], "a")
    memory.sync(view)
    memory.observe([{"kind": "started", "top": "r-5"}])
    assert memory.counts == dict.fromkeys("abcd", 7)
    memory.observe([{"kind": "played", "player": "b", "card": "r-3"}])
    (shown,) = memory.shown["b"]
    assert shown.card == "r-3" and shown.nxt == 7 and "g-3" not in shown.playable
    assert memory.counts["b"] == 6
    memory.observe([{"kind": "played", "player": "c", "card": "r-draw2"},
                    {"kind": "played", "player": "d", "card": "b-draw2"}])
    assert memory.shown["d"][0].stack  # answering the stack c began
    memory.observe([{"kind": "took_stack", "player": "a", "count": 4}])
    assert memory.counts["a"] == 11
    # a card drawn and played at once is no choice; new cards end what older plays said
    memory.observe([{"kind": "drew", "player": "b", "count": 1},
                    {"kind": "played", "player": "b", "card": "b-7"}])
    assert [s.playable for s in memory.shown["b"]] == [{"b-7"}] and memory.counts["b"] == 6
    memory.observe([{"kind": "swapped", "a": "b", "b": "c"}])
    assert set(memory.shown) == {"d"}  # b and c hold new hands: their plays say nothing of them
    assert memory.counts["b"] == 6 and memory.counts["c"] == 6


def test_a_normal_tables_real_hands_always_fit_and_sampled_ones_are_redealt():
    """Played out between ``normal`` bots, the memory of seat a never contradicts the true hands
    (it reads only events and a's own views), and the sampler with ``model_tries`` keeps fewer
    hands that do."""
    checked = plain_bad = model_bad = 0
    for step, move in enumerate(normal_rounds(RULES, "model", range(6), steps=400)):
        state, view = move.state, move.view
        if move.seat != 0 or state.pending is not None:
            continue
        memory = move.bots[0].memory
        memory.sync(view)
        for i, p in enumerate(state.players[1:], 1):
            shown = memory.shown.get(p)
            if not shown:
                continue
            checked += 1
            assert memory.counts[p] == len(state.hands[i])
            assert consistent(list(state.hands[i]), shown, RULES)
            r = random.Random(step)
            plain = determinize(view, "a", RULES, memory, r).hands[i]
            model = determinize(view, "a", RULES, memory, r, model_tries=8).hands[i]
            plain_bad += not consistent(plain, shown, RULES)
            model_bad += not consistent(model, shown, RULES)
    assert checked > 50
    assert model_bad < plain_bad / 3


def test_a_wild_names_the_colour_its_player_held_most_of_even_when_drawn_and_played_at_once():
    memory = Memory("a", stacking=RULES.stacking)
    memory.sync(view_for(new_game(["a", "b", "c", "d"], RULES, "model-1")[0], "a"))
    memory.observe([{"kind": "started", "top": "r-5"}, {"kind": "drew", "player": "b", "count": 2},
                    {"kind": "played", "player": "b", "card": "w-wild"},
                    {"kind": "color", "player": "b", "color": "green"}])
    (shown,) = memory.shown["b"]
    assert shown.named == "green"
    assert consistent(["g-1", "g-2", "b-3"], [shown], RULES)
    assert not consistent(["g-1", "b-2", "b-3"], [shown], RULES)
    assert not consistent(["g-1", "r-2"], [shown], RULES)  # a tie goes to red, first in order
