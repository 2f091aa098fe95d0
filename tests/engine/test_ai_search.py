"""The ``hard`` search's parts: what its memory infers from public events, the worlds it samples
from that, the rollout policy that stands in for the table, and the moves it compares."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine import Action, ActionKind, make_rules, new_game, view_for
from engine.ai.determinize import determinize
from engine.ai.hard import HardBot, fitted_value
from engine.ai.memory import Memory
from engine.ai.normal import NormalBot
from engine.ai.rollout import guided_action
from engine.cards import CARD_INFO

from .helpers import normal_rounds


def _started(top: str = "r-5") -> dict:
    return {"kind": "started", "top": top}


def test_a_draw_on_ones_turn_means_nothing_of_the_colour_and_no_wild():
    memory = Memory("a")
    memory.observe([_started("r-5"), {"kind": "drew", "player": "b", "count": 1}])
    assert memory.void["b"] == {"r", "w"} and memory.free["b"] == 1
    # a colour named by a wild changes what the next draw says
    memory.observe([{"kind": "played", "player": "c", "card": "w-wild"},
                    {"kind": "color", "player": "c", "color": "blue"},
                    {"kind": "drew", "player": "d", "count": 2}])
    assert memory.void["d"] == {"b", "w"} and memory.free["d"] == 2
    # cards taken later may be anything; a card of a void colour played comes out of them
    memory.observe([{"kind": "took_stack", "player": "b", "count": 4}])
    assert memory.free["b"] == 5
    memory.observe([{"kind": "played", "player": "b", "card": "r-2"}])
    assert memory.free["b"] == 4


def test_a_void_a_later_draw_replaces_still_holds_of_the_cards_held_before():
    memory = Memory("a")
    memory.observe([_started("r-5"), {"kind": "drew", "player": "b", "count": 1},
                    {"kind": "played", "player": "c", "card": "b-5"},
                    {"kind": "drew", "player": "b", "count": 2}])
    # b held no red before the first draw, no blue (nor wild) before the second
    assert memory.void["b"] == {"b", "w"} and memory.free["b"] == 2
    assert memory.older["b"] == [({"r"}, 3)]
    memory.observe([{"kind": "took_stack", "player": "b", "count": 4},
                    {"kind": "played", "player": "b", "card": "r-2"}])
    assert memory.older["b"] == [({"r"}, 6)] and memory.free["b"] == 6
    # drawing on red again: the newer void covers red for more cards, so the older one goes
    memory.observe([{"kind": "played", "player": "c", "card": "r-5"},
                    {"kind": "drew", "player": "b", "count": 1}])
    assert memory.void["b"] == {"r", "w"} and memory.older["b"] == [({"b"}, 7)]


def test_a_discard_all_leaves_its_player_no_card_of_its_colour():
    memory = Memory("a")
    memory.observe([_started("r-5"), {"kind": "drew", "player": "b", "count": 2},
                    {"kind": "played", "player": "c", "card": "g-5"},
                    {"kind": "played", "player": "b", "card": "g-discard"},
                    {"kind": "discarded", "player": "b", "cards": ["g-1", "g-7"]}])
    assert memory.void["b"] == {"g"} and memory.free["b"] == 0
    assert memory.older["b"] == [({"r", "w"}, 2)]  # the red void still holds of older cards
    memory.observe([{"kind": "played", "player": "a", "card": "b-discard"}])
    assert "a" not in memory.void  # this seat knows its own hand


def test_sampled_worlds_keep_each_void_to_the_cards_held_when_it_was_formed():
    rules, state = _position(3)
    view = view_for(state, "a")
    memory = Memory("a")
    memory.sync(view)
    memory.void["b"], memory.free["b"] = frozenset({"b", "w"}), 2
    memory.older["b"] = [(frozenset({"r"}), 4)]
    rng = random.Random(5)
    for _ in range(200):
        hand = determinize(view, "a", rules, memory, rng).hands[1]
        assert len(hand) == 7
        assert sum(CARD_INFO[c].color in ("b", "w") for c in hand) <= 2
        assert sum(CARD_INFO[c].color == "r" for c in hand) <= 4
        assert sum(CARD_INFO[c].color in ("r", "b", "w") for c in hand) <= 4


def test_under_the_printed_draw_only_the_card_a_draw_ended_on_is_free():
    """``draw: until_playable``: the cards before the playable one were all unplayable, so they
    are no more of the colour (or wild) than the older cards; the last one is played at once."""
    memory = Memory("a", until_playable=True)
    memory.observe([_started("r-5"), {"kind": "drew", "player": "b", "count": 4}])
    assert memory.void["b"] == {"r", "w"} and memory.free["b"] == 1
    memory.observe([{"kind": "played", "player": "b", "card": "r-9"}])
    assert memory.free["b"] == 0
    rules = make_rules({"preset": "printed"})
    assert NormalBot("a", rules).memory.until_playable
    assert not NormalBot("a", make_rules({"preset": "mercyless"})).memory.until_playable


def test_a_draw_forced_by_a_draw_card_says_nothing_and_a_swap_moves_it_with_the_hand():
    memory = Memory("a")
    memory.observe([_started("g-5"), {"kind": "played", "player": "b", "card": "g-draw2"},
                    {"kind": "drew", "player": "c", "count": 2}])
    assert "c" not in memory.void
    memory.observe([{"kind": "drew", "player": "d", "count": 1}])
    assert memory.void["d"] == {"g", "w"}
    memory.observe([{"kind": "played", "player": "b", "card": "b-5"},
                    {"kind": "drew", "player": "c", "count": 3}])
    assert memory.void["c"] == {"b", "w"} and memory.free["c"] == 3
    # d's hand (and what its drawing said) is now b's; c kept theirs, and their belief
    memory.observe([{"kind": "swapped", "a": "b", "b": "d"}])
    assert memory.void == {"b": {"g", "w"}, "c": {"b", "w"}}
    assert memory.free == {"b": 1, "c": 3}
    # a hand this seat gave away is known card by card: its new holder has no belief; the
    # one this seat got is its own
    memory.observe([{"kind": "swapped", "a": "a", "b": "c"}])
    assert memory.void == {"b": {"g", "w"}} and memory.free == {"b": 1}


def test_a_pass_of_hands_moves_each_belief_one_seat_on_in_the_direction_of_play():
    memory = Memory("a")
    memory.sync({"hand": ["r-1"], "players": [{"id": p, "cards": 7, "eliminated": False} for p in "abcd"]})
    memory.observe([_started("g-5"), {"kind": "drew", "player": "b", "count": 1},
                    {"kind": "played", "player": "c", "card": "y-5"},
                    {"kind": "drew", "player": "d", "count": 2}])
    assert memory.void == {"b": {"g", "w"}, "d": {"y", "w"}}
    memory.observe([{"kind": "passed_hands", "direction": 1}])  # a -> b -> c -> d -> a
    assert memory.void == {"c": {"g", "w"}} and memory.free == {"c": 1}  # d's came to a
    memory.observe([{"kind": "passed_hands", "direction": -1}])  # a -> d -> c -> b -> a
    assert memory.void == {"b": {"g", "w"}} and memory.free == {"b": 1}


def _position(seed: int):
    rules = make_rules({"turn_timer_s": 0})
    state, _ = new_game(["a", "b", "c", "d"], rules, f"voids-{seed}")
    return rules, state


def test_sampled_worlds_keep_a_players_older_cards_out_of_their_void_colours():
    rules, state = _position(3)
    view = view_for(state, "a")
    memory = Memory("a")
    memory.sync(view)
    memory.void["b"] = frozenset({"r", "w"})
    memory.free["b"] = 2  # two of b's cards came later: they may be anything
    rng = random.Random(5)
    free_reds = Counter()
    for _ in range(200):
        world = determinize(view, "a", rules, memory, rng)
        hand = world.hands[1]
        assert len(hand) == len(state.hands[1])
        reds = [c for c in hand if CARD_INFO[c].color in ("r", "w")]
        assert len(reds) <= 2
        free_reds[len(reds)] += 1
    assert free_reds[1] + free_reds[2] > 0  # the free cards are not kept out
    plain = [determinize(view, "a", rules, memory, rng, voids=False).hands[1] for _ in range(50)]
    assert any(sum(CARD_INFO[c].color in ("r", "w") for c in h) > 2 for h in plain)


def test_taking_a_stack_means_nothing_that_answers_it_until_new_cards():
    memory = Memory("a", stacking=make_rules({}).stacking)
    memory.observe([_started("r-5"), {"kind": "played", "player": "b", "card": "r-draw4"},
                    {"kind": "took_stack", "player": "c", "count": 4}])
    assert "w-draw6" in memory.lacks["c"] and "r-draw2" not in memory.lacks["c"]
    assert memory.lacks_free["c"] == 4  # the cards taken may be anything
    memory.observe([{"kind": "drew", "player": "c", "count": 1}])
    assert memory.lacks_free["c"] == 5 and memory.free["c"] == 1
    memory.observe([{"kind": "played", "player": "c", "card": "g-draw4"}])
    assert memory.lacks_free["c"] == 4
    assert "c" not in Memory("a").lacks  # no stacking rule known: no inference
    memory.observe([{"kind": "swapped", "a": "b", "b": "d"}])
    assert "c" in memory.lacks and memory.lacks_free == {"c": 4}  # c kept their hand
    memory.observe([{"kind": "swapped", "a": "c", "b": "d"}])
    assert "c" not in memory.lacks and "w-draw6" in memory.lacks["d"] and memory.lacks_free == {"d": 4}


def test_sampled_worlds_keep_a_players_older_cards_from_answering_a_stack_they_took():
    rules, state = _position(3)
    view = view_for(state, "a")
    memory = Memory("a", stacking=rules.stacking)
    memory.sync(view)
    answers = frozenset(c for c in CARD_INFO if CARD_INFO[c].draw >= 4)
    memory.lacks["b"] = answers
    memory.lacks_free["b"] = 1
    memory.void["b"] = frozenset({"r", "w"})
    memory.free["b"] = 3  # the colour belief is older: more of b's cards are free of it
    rng = random.Random(5)
    for _ in range(200):
        hand = determinize(view, "a", rules, memory, rng).hands[1]
        assert len(hand) == len(state.hands[1])
        assert sum(c in answers for c in hand) <= 1
        assert sum(CARD_INFO[c].color in ("r", "w") for c in hand) <= 3


def test_the_guided_rollout_plays_as_the_normal_bot_does():
    """The search's stand-in for the table: it should move as the ``normal`` bots it meets."""
    same = total = 0
    for move in normal_rounds(make_rules({"turn_timer_s": 0}), "guided", range(8), steps=300):
        if move.action.kind not in (ActionKind.UNO, ActionKind.CATCH):
            guided = guided_action(move.state.clone(), move.seat, random.Random(1))
            total += 1
            same += (guided.kind, guided.card) == (move.action.kind, move.action.card)
    assert total > 300 and same / total > 0.95, (same, total)


def test_a_wild_is_searched_with_each_colour_the_hand_holds():
    """By default (``colors``: measured stronger at the tournament's 85 ms, docs/benchmarks.md)."""
    rules = make_rules({"turn_timer_s": 0})
    bot = HardBot("a", rules, budget_ms=1e9, max_worlds=2, horizon=10)
    view = {
        "players": [{"id": "a", "cards": 4, "eliminated": False, "uno": False, "score": 0},
                    {"id": "b", "cards": 5, "eliminated": False, "uno": False, "score": 0}],
        "hand": ["w-wild", "r-3", "r-4", "g-7"],
        "game": {"top": "b-9", "color": "blue", "direction": 1, "turn": "a", "stack": None,
                 "pending": None, "exposed": [], "winner": None, "draw_pile": 50,
                 "discard_pile": 3, "set_aside": 0, "dealer": "b",
                 "legal": {"play": ["w-wild"], "draw": True, "pass": False, "choose": [],
                           "cancel": False, "uno": False, "catch": []}},
    }
    candidates = bot._candidates(view, random.Random(1))
    wilds = sorted(a.color for a in candidates if a.card == "w-wild")
    assert wilds == ["green", "red"]
    assert any(a.kind is ActionKind.DRAW for a in candidates)
    plain = HardBot("a", rules, budget_ms=1e9, max_worlds=2, horizon=10, colors=False)._candidates(
        view, random.Random(1))
    assert [a.color for a in plain if a.card == "w-wild"] == ["red"]  # the one it holds most of


def test_a_seven_is_searched_with_each_other_active_player_to_swap_with():
    """By default (``targets``), not only the smallest hand the ``normal`` heuristic picks."""
    rules = make_rules({"turn_timer_s": 0})
    players = [{"id": pid, "cards": n, "eliminated": pid == "d", "uno": False, "score": 0}
               for pid, n in (("a", 3), ("b", 5), ("c", 2), ("d", 0), ("e", 6))]
    view = {
        "players": players, "hand": ["r-7", "g-4", "b-1"],
        "game": {"top": "r-9", "color": "red", "direction": 1, "turn": "a", "stack": None,
                 "pending": None, "exposed": [], "winner": None, "draw_pile": 50,
                 "discard_pile": 3, "set_aside": 0, "dealer": "e",
                 "legal": {"play": ["r-7"], "draw": True, "pass": False, "choose": [],
                           "cancel": False, "uno": False, "catch": []}},
    }
    sevens = [a.target for a in HardBot("a", rules)._candidates(view, random.Random(1)) if a.card == "r-7"]
    assert sevens == ["c", "b", "e"]  # the normal move's first; the knocked-out seat never
    plain = HardBot("a", rules, targets=False)._candidates(view, random.Random(1))
    assert [a.target for a in plain if a.card == "r-7"] == ["c"]


def test_the_colours_and_partners_are_searched_by_default_only_with_a_wide_budget():
    """At 40 ms they lost games (too few worlds for each extra candidate), at 85 ms they won more."""
    rules = make_rules({"turn_timer_s": 0})
    narrow, wide = HardBot("a", rules, budget_ms=40), HardBot("a", rules, budget_ms=85)
    assert (narrow.colors, narrow.targets, wide.colors, wide.targets) == (False, False, True, True)
    forced = HardBot("a", rules, budget_ms=40, colors=True, targets=True)
    assert forced.colors and forced.targets and not HardBot("a", rules, budget_ms=85, colors=False).colors


def test_with_void_color_a_wild_names_a_held_colour_the_next_player_lacks():
    rules = make_rules({"turn_timer_s": 0})
    view = {
        "players": [{"id": "a", "cards": 4, "eliminated": False, "uno": False, "score": 0},
                    {"id": "b", "cards": 5, "eliminated": False, "uno": False, "score": 0}],
        "hand": ["w-wild", "r-3", "r-4", "g-7"],
        "game": {"direction": 1},
    }
    bot = HardBot("a", rules, void_color=True)
    assert bot._complete(view, "w-wild").color == "red"  # nothing known: the one held most
    bot.memory.observe([_started("g-5"), {"kind": "drew", "player": "b", "count": 1}])
    assert bot._complete(view, "w-wild").color == "green"
    assert HardBot("a", rules)._complete(view, "w-wild").color == "red"


def test_the_fitted_leaf_is_a_chance_that_favours_few_cards_and_fears_a_knock_out_stack():
    """``leaf="fitted"``: a softmax over the active players, so the seats' values sum to 1;
    fewer cards is better, and a stack that would take its target past the limit is bad news."""
    rules = make_rules({"turn_timer_s": 0})
    state, _ = new_game(["a", "b", "c", "d"], rules, "leaf")
    s = state.clone()
    s.hands[1] = s.hands[1][:2]
    values = [fitted_value(s, i) for i in range(4)]
    assert abs(sum(values) - 1) < 1e-9 and values[1] == max(values)
    s.eliminated[3] = True
    assert fitted_value(s, 3) == 0.0 and abs(sum(fitted_value(s, i) for i in range(3)) - 1) < 1e-9
    s.hands[0] = s.hands[0] + s.draw_pile[:13]  # 20 cards, at the turn
    calm = fitted_value(s, 0)
    s.stack_total, s.stack_last = 6, 6
    assert fitted_value(s, 0) < calm
    s.winner = 2
    assert [fitted_value(s, i) for i in range(4)] == [0.0, 0.0, 1.0, 0.0]


def test_an_unknown_leaf_is_refused_by_name():
    """``leaf`` is "hands" (the default) or "fitted"; anything else (a typo in ``--set``) raises
    instead of quietly searching with the hand-size leaf."""
    rules = make_rules({"turn_timer_s": 0})
    default = HardBot("a", rules)
    assert default.leaf.__func__ is HardBot("a", rules, leaf="hands").leaf.__func__ is HardBot._value
    assert HardBot("a", rules, leaf="fitted").leaf is fitted_value
    with pytest.raises(ValueError, match="leaf must be one of hands, fitted, not 'fited'"):
        HardBot("a", rules, leaf="fited")


def _first_turn_with_plays(rules, plays: int, seed: str):
    """The first deal of seeds ``seed-0``, ``seed-1``, ... whose first player may play at least
    ``plays`` cards: that player, their view and the deal's events."""
    for k in range(50):
        state, events = new_game(["a", "b", "c", "d"], rules, f"{seed}-{k}")
        me = state.players[state.turn]
        view = view_for(state, me)
        if len(view["game"]["legal"]["play"]) >= plays:
            return me, view, events
    raise AssertionError(f"no deal of {seed} lets its first player play {plays} cards")


def test_clock_cpu_bounds_the_search_by_cpu_time_not_the_wall_clock(monkeypatch):
    """``clock="cpu"`` reads ``time.process_time`` (which a busy machine does not stretch): a CPU
    clock that runs out stops the search after a few worlds, while the wall clock's budget,
    far from spent, would have sampled them all; an unknown clock is refused by name."""
    import engine.ai.hard as hard

    rules = make_rules({"turn_timer_s": 0})
    me, view, events = _first_turn_with_plays(rules, 2, "clock")
    ticks = iter(range(0, 10**6, 10))  # each read of the CPU clock: 10 seconds later
    monkeypatch.setattr(hard.time, "process_time", lambda: next(ticks))
    sampled: list[int] = []

    def counting(*args):
        sampled.append(1)
        return determinize(*args)

    monkeypatch.setattr(hard, "determinize", counting)
    for clock, want in (("cpu", range(1, 5)), ("wall", [12])):
        sampled.clear()
        bot = HardBot(me, rules, budget_ms=35_000, max_worlds=12, horizon=3, clock=clock)
        bot.observe([e.to_wire(me) for e in events])
        bot.decide(view, random.Random(1))
        assert len(sampled) in want, clock
    with pytest.raises(ValueError, match="clock must be one of wall, cpu, not 'process'"):
        HardBot("a", rules, clock="process")


def test_a_search_timed_by_cpu_also_stops_at_three_budgets_of_wall_clock(monkeypatch):
    """A worker starved of CPU (the machine busy) would take many budgets of wall clock for its
    CPU budget: the search stops at three, with the worlds it has (``wall_ms`` sets it)."""
    import engine.ai.hard as hard

    rules = make_rules({"turn_timer_s": 0})
    me, view, events = _first_turn_with_plays(rules, 2, "clock")
    monkeypatch.setattr(hard.time, "process_time", lambda: 0.0)  # no CPU time passes
    ticks = iter(range(0, 10**6, 10))  # each read of the wall clock: 10 seconds later
    monkeypatch.setattr(hard.time, "perf_counter", lambda: float(next(ticks)))
    sampled: list[int] = []

    def counting(*args):
        sampled.append(1)
        return determinize(*args)

    monkeypatch.setattr(hard, "determinize", counting)
    for wall_ms, want in ((None, range(1, 4)), (1e9, [12])):
        sampled.clear()
        bot = HardBot(me, rules, budget_ms=5_000, max_worlds=12, horizon=3, wall_ms=wall_ms)
        assert bot.wall_ms == (15_000 if wall_ms is None else wall_ms)
        bot.observe([e.to_wire(me) for e in events])
        bot.decide(view, random.Random(1))
        assert len(sampled) in want, wall_ms


def test_the_default_search_is_the_one_the_tournament_measured():
    """85 ms of CPU time, up to 64 worlds, a wild's colour and a 7's partner searched: the
    configuration of docs/benchmarks.md's 2,000-game figures (45.3% / 49.0%)."""
    import time

    from engine.ai.hard import SEARCH_BUDGET_MS, SEARCH_WORLDS

    bot = HardBot("a", make_rules({}))
    assert (bot.budget_ms, bot.max_worlds, SEARCH_BUDGET_MS, SEARCH_WORLDS) == (85.0, 64, 85.0, 64)
    assert bot.clock is time.process_time and bot.colors and bot.targets and bot.wall_ms == 255.0
    assert HardBot("a", make_rules({}), clock="wall").wall_ms == 85.0


def test_tournament_options_are_read_as_numbers_booleans_or_strings():
    from engine.ai.tournament import _literal

    assert [_literal(v) for v in ("30", "0.1", "true", "fitted")] == [30, 0.1, True, "fitted"]


def test_successive_halving_spends_no_more_rollouts_than_the_flat_search():
    """``halving=True``: n candidates over ceil(log2 n) rounds of max_worlds * n / rounds
    rollouts; the worse half is dropped after each round but the last, and the choice is one of
    the candidates still in."""
    rules = make_rules({"turn_timer_s": 0})
    me, view, events = _first_turn_with_plays(rules, 3, "halve")
    bot = HardBot(me, rules, budget_ms=1e9, max_worlds=4, horizon=5, halving=True)
    bot.observe([e.to_wire(me) for e in events])
    bot.memory.sync(view)
    candidates = bot._candidates(view, random.Random(1))
    calls: list[Action] = []
    play = bot._play
    bot._play = lambda world, seat, action, seed, rng: calls.append(action) or play(  # type: ignore[method-assign]
        world, seat, action, seed, rng)
    choice = bot._halve(view, candidates, None, random.Random(2))
    assert choice in candidates and len(candidates) >= 3
    assert len(candidates) * 4 // 2 <= len(calls) <= len(candidates) * 4
    assert calls.count(choice) > 4  # a finalist is played on more worlds than a flat search's


def _colour(card: str, absent: frozenset[str]) -> bool:
    return CARD_INFO[card].color in absent


def _card(card: str, absent: frozenset[str]) -> bool:
    return card in absent


@pytest.mark.parametrize("preset", ["mercyless", "printed"])
def test_beliefs_never_contradict_the_true_hands_as_hands_are_swapped_and_passed(preset):
    """Whole rounds between ``normal`` bots (which play whenever they can): seat a's beliefs,
    the voids later draws replaced among them, moved with each swap and pass of hands, always
    hold of the hands the other players really have: no more cards of a void colour (or wilds)
    than the cards got since, none that answers a stack taken beyond the cards got since
    (cards known by sight aside)."""
    checked = moved = older = 0
    for move in normal_rounds(make_rules({"preset": preset, "turn_timer_s": 0}), "beliefs", range(8)):
        state, memory = move.state, move.bots[0].memory
        moved += any(e.kind in ("swapped", "passed_hands") for e in move.events)
        memory.sync(view_for(state, "a"))
        for i, p in enumerate(state.players[1:], 1):
            if state.eliminated[i]:
                continue
            hand, known = state.hands[i], memory.known.get(p, Counter())
            beliefs = [(colors, free, _colour) for colors, free in memory.older.get(p, ())]
            if p in memory.void:
                beliefs.append((memory.void[p], memory.free.get(p, 0), _colour))
            if p in memory.lacks:
                beliefs.append((memory.lacks[p], memory.lacks_free.get(p, 0), _card))
            for absent, free, hit in beliefs:
                checked += 1
                older += len(beliefs) > 2
                unseen = sum(hit(c, absent) for c in hand)
                unseen -= sum(k for c, k in known.items() if hit(c, absent))
                assert unseen <= free, (p, sorted(hand), absent, free)
    assert checked > 300 and moved > 30 and older > 30
