"""Bots: every move legal, no stalled choice, and decisions that depend only on what the seat
may know (its view and its own copy of the events)."""

from __future__ import annotations

import copy
import random

import pytest

from engine import BOT_LEVELS, Action, ActionKind, ai, apply, make_rules, new_game, view_for
from engine.ai import make_bot
from engine.ai.tournament import play_game, run, wilson
from engine.cards import CARD_INFO
from engine.game import next_deadline

LEVEL_MIXES = [["easy", "normal", "hard", "easy"], ["normal", "normal", "hard", "hard"],
               ["hard", "easy", "normal"], ["normal", "hard"]]
FAST_HARD = {"budget_ms": 1000.0, "max_worlds": 3, "horizon": 20}


@pytest.mark.parametrize("preset", ["mercyless", "printed"])
@pytest.mark.parametrize("levels", LEVEL_MIXES)
def test_bots_only_make_legal_moves_and_never_stall(levels, preset):
    for seed in range(4):
        rules = make_rules({"preset": preset, "turn_timer_s": 0})
        players = [f"p{i}" for i in range(len(levels))]
        bots = [make_bot(lv, p, rules, **(FAST_HARD if lv == "hard" else {}))
                for lv, p in zip(levels, players, strict=True)]
        rng = random.Random(seed)
        state, events = new_game(players, rules, f"ai-{seed}")
        now = 0
        for _ in range(3000):
            for bot, p in zip(bots, players, strict=True):
                bot.observe([e.to_wire(p) for e in events])
            if state.over:
                break
            now += 700
            due = next_deadline(state)
            if due is not None and due[1] <= now:
                state, events = apply(state, None, Action(due[0]), now)
                continue
            seat = state.pending.player if state.pending is not None else state.turn
            action = bots[seat].decide(view_for(state, players[seat], None, now), rng)
            assert action is not None, "a bot stalled on its own turn or choice"
            state, events = apply(state, players[seat], action, now)  # raises if illegal
        assert state.over


def _permute_hidden(state, me: str, rng: random.Random):
    """The same view for ``me``, with every card hidden from ``me`` dealt differently."""
    s = state.clone()
    seat = s.players.index(me)
    hidden = list(s.draw_pile) + list(s.set_aside)
    for i, h in enumerate(s.hands):
        if i != seat:
            hidden += h
    rng.shuffle(hidden)
    k = 0
    hands = list(s.hands)
    for i, h in enumerate(s.hands):
        if i != seat:
            hands[i] = hidden[k:k + len(h)]
            k += len(h)
    s.hands = hands
    s.set_aside = hidden[k:k + len(s.set_aside)]
    k += len(s.set_aside)
    s.draw_pile = hidden[k:]
    return s


@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_a_bot_cannot_see_hidden_cards(level):
    """Same view + same events + same seed => same decision, however the hidden cards lie."""
    rules = make_rules({"turn_timer_s": 0})
    players = ["a", "b", "c", "d"]
    opts = {"budget_ms": 1e9, "max_worlds": 4, "horizon": 15} if level == "hard" else {}
    checked = 0
    for seed in range(6):
        rng = random.Random(seed)
        state, events = new_game(players, rules, f"hidden-{seed}")
        log = [e.to_wire("a") for e in events]
        for _step in range(120):
            if state.over:
                break
            seat = state.pending.player if state.pending is not None else state.turn
            actor = players[seat]
            if actor == "a":
                other = _permute_hidden(state, "a", rng)
                assert view_for(other, "a") == view_for(state, "a")
                decisions = []
                for world in (state, other):
                    bot = make_bot(level, "a", rules, **opts)
                    bot.observe(log)
                    decisions.append(bot.decide(view_for(world, "a"), random.Random(99)))
                assert decisions[0] == decisions[1]
                checked += 1
                action = decisions[0]
            else:
                bot = make_bot("easy", actor, rules)
                action = bot.decide(view_for(state, actor), rng)
            state, events = apply(state, actor, action, 0)
            log += [e.to_wire("a") for e in events]
    assert checked >= 30


def test_normal_answers_a_stack_with_its_smallest_card_and_calls_uno():
    rules = make_rules({"turn_timer_s": 0})
    bot = make_bot("normal", "a", rules)
    view = {
        "players": [{"id": "a", "cards": 3, "eliminated": False, "uno": False, "score": 0},
                    {"id": "b", "cards": 5, "eliminated": False, "uno": False, "score": 0}],
        "hand": ["w-draw10", "y-draw4", "r-3"],
        "game": {"top": "g-draw4", "color": "green", "direction": 1, "turn": "a",
                 "stack": {"total": 4, "last": 4, "target": "a"}, "pending": None, "exposed": [],
                 "winner": None, "draw_pile": 50, "discard_pile": 3, "set_aside": 0, "dealer": "b",
                 "legal": {"play": ["w-draw10", "y-draw4"], "draw": True, "pass": False, "choose": [],
                           "cancel": False, "uno": False, "catch": []}},
    }
    action = bot.decide(view, random.Random(1))
    assert action.kind is ActionKind.PLAY and action.card == "y-draw4"
    view["hand"] = ["r-3", "r-4"]
    view["game"]["stack"] = None
    view["game"]["top"] = "r-9"
    view["game"]["color"] = "red"
    view["game"]["legal"]["play"] = ["r-3", "r-4"]
    action = bot.decide(view, random.Random(1))
    assert action.uno is True and CARD_INFO[action.card].color == "r"


def test_tournament_runs_and_reports_an_interval():
    times = {"normal": [], "easy": []}
    winner = play_game(["normal", "easy", "easy", "easy"], "mercyless", 3, times, {})
    assert 0 <= winner < 4 and times["normal"]
    low, high = wilson(40, 100)
    assert low < 0.4 < high


def test_a_tournament_in_two_processes_plays_the_same_seeds():
    serial = run("normal", "easy", 8, "mercyless", 5, {})
    split = run("normal", "easy", 8, "mercyless", 5, {}, jobs=2)
    assert (split["wins"], split["games"]) == (serial["wins"], serial["games"])
    assert len(split["times"]["normal"]) == len(serial["times"]["normal"]) > 0


def test_every_bot_level_makes_a_bot_of_that_level():
    """One tuple of levels (``engine.BOT_LEVELS``), which the server checks ``add_bot`` against."""
    assert BOT_LEVELS == ai.BOT_LEVELS == ("easy", "normal", "hard")
    rules = make_rules({})
    assert [make_bot(level, "p0", rules).level for level in BOT_LEVELS] == list(BOT_LEVELS)


def test_a_bot_in_a_worker_process_decides_as_in_place_and_cannot_see_hidden_cards():
    """The server's worker path (engine.ai.think in another process, fed a Thought: the seat's
    view and a copy of its bot's memory) makes the move the bot makes in place, and the same
    move however the hidden cards lie."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from engine.ai.think import Thought, think

    rules = make_rules({"turn_timer_s": 0})
    players = ["a", "b", "c", "d"]
    opts = {"max_worlds": 4, "horizon": 15}
    checked = 0
    with ProcessPoolExecutor(1, multiprocessing.get_context("spawn")) as pool:
        for seed in range(3):
            rng = random.Random(seed)
            state, events = new_game(players, rules, f"worker-{seed}")
            mine = make_bot("hard", "a", rules, budget_ms=1e9, **opts)
            mine.observe([e.to_wire("a") for e in events])
            for step in range(120):
                if state.over:
                    break
                seat = state.pending.player if state.pending is not None else state.turn
                actor = players[seat]
                if actor == "a":
                    other = _permute_hidden(state, "a", rng)
                    thoughts = [Thought("hard", "a", rules, copy.deepcopy(mine.memory), view_for(world, "a"),
                                        f"s{seed}-{step}", 1e9, opts) for world in (state, other)]
                    remote = list(pool.map(think, thoughts))
                    here = think(thoughts[0])
                    assert remote[0] == remote[1] == here
                    checked += 1
                    action = here
                else:
                    action = make_bot("easy", actor, rules).decide(view_for(state, actor), rng)
                state, events = apply(state, actor, action, 0)
                mine.observe([e.to_wire("a") for e in events])
    assert checked >= 20


def test_the_control_corrects_the_rate_by_how_the_deals_favoured_the_seat():
    from engine.ai.tournament import controlled

    won = [1, 1, 0, 0, 1, 0, 0, 0]
    k = controlled(won, [1, 1, 0, 0, 0, 0, 0, 0])  # the control won 25%: nothing to correct
    assert abs(k["rate"] - 3 / 8) < 1e-9 and k["se"] < k["raw_se"]
    lucky = controlled(won, [1, 1, 0, 0, 1, 0, 0, 0])  # deals that favoured the seat: less
    assert lucky["rate"] < 3 / 8 and abs(lucky["rho"] - 1) < 1e-9
