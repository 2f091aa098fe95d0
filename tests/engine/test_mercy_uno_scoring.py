"""Scenario tests of rules.md "Mercy", "Running out", "UNO and Catch", "Ending and scoring",
the server steps ``timeout``/``resolve``/``expire`` (docs/engine.md) and rules validation."""

from __future__ import annotations

from collections import Counter

import pytest

from engine import (
    PRESETS,
    STANDARD_DECK,
    ActionKind,
    RulesError,
    apply,
    make_rules,
    new_game,
    next_deadline,
    view_for,
)
from engine.actions import CANCEL, DRAW, EXPIRE, RESOLVE, TIMEOUT, UNO, catch, choose, play
from tests.engine.helpers import NOW, act, build, conserved, event, hand, kinds, pending, refused

PILE = ["g-1", "g-2", "g-3", "g-4", "g-5", "g-6", "g-7", "g-8", "g-9", "y-9"]  # y-9 drawn first


# -- Mercy ----------------------------------------------------------------------------------------

def test_mercy_stops_a_taken_stack_mid_way():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1"] * 22, "c": ["y-1", "y-2"]}, top="w-draw6",
              color="green", stack=(6, 6), turn="b", draw=list(PILE))
    t, ev = act(s, "b", DRAW)
    assert kinds(ev) == ["took_stack", "eliminated"]
    assert event(ev, "took_stack")["count"] == 3
    assert event(ev, "eliminated")["player"] == "b"
    assert t.eliminated == [False, True, False]
    assert hand(t, "b") == []
    assert Counter(t.set_aside) == Counter(["b-1"] * 22 + ["y-9", "g-9", "g-8"])
    assert t.draw_pile == PILE[:7]  # the other 3 cards of the penalty are dropped
    assert (t.stack_total, t.stack_last) == (0, 0)
    assert t.players[t.turn] == "c"
    assert t.winner is None
    g = view_for(t, "a")["game"]
    assert g["set_aside"] == 25
    assert [p["eliminated"] for p in view_for(t, "a")["players"]] == [False, True, False]
    conserved(s, t)


def test_mercy_stops_a_penalty_draw_without_stacking():
    s = build({"a": ["w-draw6", "r-1", "r-2"], "b": ["b-1"] * 20, "c": ["y-1", "y-2"]}, top="r-3",
              draw=list(PILE), rules={"stacking": "off"})
    t, ev = act(s, "a", play("w-draw6", color="red"))
    assert event(ev, "drew") == {"kind": "drew", "player": "b", "count": 5}
    assert "eliminated" in kinds(ev)
    assert t.eliminated[1] is True and len(t.set_aside) == 25
    assert t.draw_pile == PILE[:5]
    assert t.players[t.turn] == "c"


def test_mercy_mid_voluntary_draw():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1"] * 24, "c": ["y-1", "y-2"]}, top="g-3", turn="b",
              draw=["r-5", "r-6"])
    t, ev = act(s, "b", DRAW)
    assert kinds(ev) == ["drew", "eliminated"]
    assert t.eliminated == [False, True, False]
    assert Counter(t.set_aside) == Counter(["b-1"] * 24 + ["r-6"])
    assert t.draw_pile == ["r-5"]
    assert t.players[t.turn] == "c"
    refused(t, "b", DRAW, "eliminated")
    refused(t, "b", catch("a"), "eliminated")


def test_below_the_limit_nobody_is_eliminated():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1"] * 23, "c": ["y-1", "y-2"]}, top="g-3", turn="b",
              draw=["r-5", "r-6"])
    t, ev = act(s, "b", DRAW)
    assert kinds(ev) == ["drew"]
    assert len(hand(t, "b")) == 24 and t.eliminated == [False, False, False]


def test_mercy_limit_option():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1"] * 8, "c": ["y-1", "y-2"]}, top="r-draw2",
              stack=(2, 2), turn="b", draw=list(PILE), rules={"mercy_limit": 10})
    t, ev = act(s, "b", DRAW)
    assert kinds(ev) == ["took_stack", "eliminated"]
    assert len(t.set_aside) == 10
    big = build({"a": ["r-1", "r-2"], "b": ["b-1"] * 30, "c": ["y-1", "y-2"]}, top="r-draw2",
                stack=(2, 2), turn="b", draw=list(PILE), rules={"mercy_limit": 60})
    t, ev = act(big, "b", DRAW)
    assert kinds(ev) == ["took_stack"]
    assert len(hand(t, "b")) == 32 and not t.eliminated[1]


def test_mercy_by_a_catch_penalty():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1"], "c": ["y-1", "y-2"]}, top="r-3", turn="c",
              draw=list(PILE), exposed={"b": NOW + 5000},
              rules={"mercy_limit": 10, "uno_penalty": 10})
    tr = apply(s, "a", catch("b"), NOW + 100)
    ev = [e.to_wire("b") for e in tr.events]
    t = tr.state
    assert kinds(ev) == ["caught", "eliminated"]
    caught = event(ev, "caught")
    assert caught["count"] == 9 and caught["by"] == "a" and caught["player"] == "b"
    assert caught["cards"] == PILE[::-1][:9]
    assert t.eliminated == [False, True, False]
    assert Counter(t.set_aside) == Counter(["b-1", *PILE[1:]])
    assert t.draw_pile == PILE[:1]  # the tenth penalty card is dropped
    assert t.exposed == []
    assert t.players[t.turn] == "c"


def test_mercy_mid_roulette_with_two_players_ends_the_round():
    s = build({"a": ["w-roulette", "r-1", "r-2"], "b": ["b-1"] * 24}, top="r-3",
              draw=["g-5", "r-7", "r-8"])
    t, _ = act(s, "a", play("w-roulette"))
    u, ev = act(t, "b", choose(color="green"))
    assert kinds(ev) == ["roulette", "eliminated", "round_over"]
    assert event(ev, "roulette")["cards"] == ["r-8"]
    assert u.draw_pile == ["g-5", "r-7"]
    assert u.winner == 0 and u.end_reason == "last_standing"


def test_last_active_player_wins_the_round():
    s = build({"a": ["r-1", "y-2"], "b": ["b-1"] * 22}, top="w-draw6", color="green",
              stack=(6, 6), turn="b", draw=list(PILE))
    t, ev = act(s, "b", DRAW)
    assert kinds(ev) == ["took_stack", "eliminated", "round_over"]
    over = event(ev, "round_over")
    assert over["winner"] == "a" and over["reason"] == "last_standing"
    assert over["points"] == 250  # the winner's own hand is not counted, the eliminated hand neither
    assert over["scores"] == {"a": 250, "b": 0}
    assert t.winner == 0 and t.scores == [250, 0]
    assert view_for(t, "a")["game"]["revealed"] == {"a": ["r-1", "y-2"]}
    refused(t, "a", play("r-1"), "game_over")


def test_last_active_player_wins_among_many_seats():
    s = build({"a": ["r-1", "y-2"], "b": [], "c": ["b-1"] * 24, "d": []}, top="g-3", turn="c",
              eliminated=["b", "d"], set_aside=["y-7"] * 50, draw=["g-8"])
    t, ev = act(s, "c", DRAW)
    assert kinds(ev) == ["drew", "eliminated", "round_over"]
    assert event(ev, "round_over")["points"] == 750
    assert t.winner == 0


def test_stack_aimed_at_an_eliminated_player_drops():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1"], "c": ["y-1", "y-2"]}, top="r-draw2",
              stack=(4, 2), turn="b", draw=list(PILE), exposed={"b": NOW + 5000},
              rules={"mercy_limit": 10, "uno_penalty": 10})
    t, ev = act(s, "c", catch("b"))
    assert kinds(ev) == ["caught", "eliminated"]
    assert t.eliminated[1] is True
    assert (t.stack_total, t.stack_last) == (0, 0)  # nobody takes that stack
    assert t.players[t.turn] == "c"
    assert hand(t, "a") == ["r-1", "r-2"] and hand(t, "c") == ["y-1", "y-2"]
    assert t.draw_pile == PILE[:1]
    assert view_for(t, "c")["game"]["stack"] is None


def test_roulette_choice_waiting_on_an_eliminated_player_drops():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1"], "c": ["y-1", "y-2"]}, top="w-roulette",
              color="red", turn="b", draw=list(PILE), exposed={"b": NOW + 5000},
              rules={"mercy_limit": 10, "uno_penalty": 10})
    s = pending(s, "b", "roulette_color", "w-roulette", by="a")
    t, ev = act(s, "a", catch("b"))
    assert kinds(ev) == ["caught", "eliminated"]
    assert t.pending is None
    assert t.players[t.turn] == "c"
    assert "roulette" not in kinds(ev)
    refused(t, "b", choose(color="red"), "eliminated")


# -- Running out ----------------------------------------------------------------------------------

def test_penalty_goes_on_after_a_reshuffle_with_set_aside_hands():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1", "b-2"], "c": ["y-1", "y-2"], "d": []},
              top="w-draw6", color="green", stack=(6, 6), turn="b",
              draw=["g-1", "g-2", "g-3", "g-4"], discard=["r-5", "y-6"],
              set_aside=["b-7", "b-8", "b-9"], eliminated=["d"])
    t, ev = act(s, "b", DRAW)
    assert kinds(ev) == ["reshuffled", "took_stack"]
    assert event(ev, "reshuffled")["count"] == 5
    assert event(ev, "took_stack")["count"] == 6  # 4 before the pile ran out, 2 after
    got = hand(t, "b")[2:]
    assert got[:4] == ["g-4", "g-3", "g-2", "g-1"]
    material = ["r-5", "y-6", "b-7", "b-8", "b-9"]
    assert Counter(got[4:] + t.draw_pile) == Counter(material)
    assert len(t.draw_pile) == 3
    assert t.set_aside == []
    assert t.discard == ["w-draw6"]
    assert t.players[t.turn] == "c"
    conserved(s, t)


def test_reshuffle_only_when_a_card_must_be_drawn():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1", "b-2"], "c": ["y-1", "y-2"]}, top="r-3",
              discard=["g-5", "g-6"], set_aside=[])
    t, _ = act(s, "a", play("r-1"))
    assert t.draw_pile == [] and t.discard == ["g-5", "g-6", "r-3", "r-1"]
    u, ev = act(t, "b", DRAW)
    assert kinds(ev) == ["reshuffled", "drew"]
    assert u.discard == ["r-1"] and len(u.draw_pile) == 2
    assert event(ev, "reshuffled")["count"] == 3


def test_draw_ends_short_when_nothing_is_left():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1", "b-2"], "c": ["y-1", "y-2"]}, top="w-draw6",
              color="green", stack=(6, 6), turn="b", draw=["g-1", "g-2"])
    t, ev = act(s, "b", DRAW)
    assert kinds(ev) == ["took_stack"]
    assert event(ev, "took_stack")["count"] == 2
    assert hand(t, "b") == ["b-1", "b-2", "g-2", "g-1"]
    assert t.draw_pile == [] and t.discard == ["w-draw6"]
    assert (t.stack_total, t.stack_last) == (0, 0)
    assert t.players[t.turn] == "c"


# -- UNO and catch --------------------------------------------------------------------------------

def uno_table(**kw):
    return build({"a": ["r-5", "r-6"], "b": ["b-1", "r-2", "r-draw2"], "c": ["y-1", "y-2"]}, top="r-3",
                 draw=list(PILE), **kw)


def test_uno_called_in_the_play():
    s = uno_table()
    t, ev = act(s, "a", play("r-5", uno=True))
    assert kinds(ev) == ["played", "uno"]
    assert event(ev, "uno")["player"] == "a"
    assert t.uno == [True, False, False]
    assert t.exposed == []
    assert view_for(t, "b")["players"][0]["uno"] is True
    refused(t, "b", catch("a"), "not_exposed", NOW + 1)


def test_going_down_to_one_card_without_a_call_exposes():
    s = uno_table()
    t, ev = act(s, "a", play("r-5"))
    assert kinds(ev) == ["played", "exposed"]
    assert event(ev, "exposed")["player"] == "a"
    assert t.exposed == [(0, NOW + 5000)]
    assert t.uno == [False, False, False]
    assert view_for(t, "c")["game"]["exposed"] == [{"player": "a", "until": NOW + 5000}]
    assert next_deadline(t) == (ActionKind.EXPIRE, NOW + 5000)


def test_uno_action_closes_the_window_and_cannot_be_repeated():
    s = uno_table()
    t, _ = act(s, "a", play("r-5"))
    u, ev = act(t, "a", UNO, NOW + 1000)
    assert kinds(ev) == ["uno"]
    assert u.uno[0] is True and u.exposed == []
    refused(u, "a", UNO, "already_called")
    refused(u, "b", catch("a"), "not_exposed", NOW + 1001)


def test_uno_action_needs_one_card():
    s = uno_table()
    refused(s, "a", UNO, "not_one_card")
    refused(s, "b", UNO, "not_one_card")


def test_catch_within_the_window_costs_the_penalty():
    s = uno_table()
    t, _ = act(s, "a", play("r-5"))
    tr = apply(t, "c", catch("a"), NOW + 4999)
    u = tr.state
    ev = [e.to_wire("c") for e in tr.events]
    assert kinds(ev) == ["caught"]
    assert ev[0] == {"kind": "caught", "player": "a", "by": "c", "count": 2}
    own = [e.to_wire("a") for e in tr.events]
    assert own[0]["cards"] == ["y-9", "g-9"]
    assert hand(u, "a") == ["r-6", "y-9", "g-9"]
    assert u.exposed == [] and u.uno[0] is False
    assert u.players[u.turn] == "b"  # a catch does not move the turn
    refused(u, "b", catch("a"), "not_exposed", NOW + 4999)


def test_late_catch_is_refused_and_costs_nothing():
    s = uno_table()
    t, _ = act(s, "a", play("r-5"))
    refused(t, "c", catch("a"), "not_exposed", NOW + 5000)
    refused(t, "c", catch("a"), "not_exposed", NOW + 60_000)


def test_catching_a_player_who_is_not_exposed_is_refused():
    s = uno_table()
    refused(s, "c", catch("a"), "not_exposed")
    refused(s, "c", catch("b"), "not_exposed")
    t, _ = act(s, "a", play("r-5"))
    refused(t, "a", catch("a"), "bad_target")
    refused(t, "b", catch("nobody"), "bad_target")


def test_expire_closes_windows_at_or_after_the_deadline():
    s = uno_table()
    t, _ = act(s, "a", play("r-5"))
    refused(t, None, EXPIRE, "too_early", NOW + 4999)
    u, ev = act(t, None, EXPIRE, NOW + 5000)
    assert kinds(ev) == ["window_closed"]
    assert event(ev, "window_closed")["player"] == "a"
    assert u.exposed == []
    assert hand(u, "a") == ["r-6"] and u.uno[0] is False
    refused(u, "c", catch("a"), "not_exposed", NOW + 5000)
    v, _ = act(t, None, EXPIRE, NOW + 9000)
    assert v.exposed == []
    refused(s, None, EXPIRE, "too_early")  # no window at all


def test_expire_closes_only_the_windows_that_are_due():
    s = build({"a": ["r-5"], "b": ["b-1"], "c": ["y-1", "y-2"]}, top="r-3", turn="c",
              exposed={"a": NOW + 1000, "b": NOW + 3000})
    t, ev = act(s, None, EXPIRE, NOW + 2000)
    assert kinds(ev) == ["window_closed"] and ev[0]["player"] == "a"
    assert t.exposed == [(1, NOW + 3000)]


def test_expire_is_a_server_step_only():
    s = build({"a": ["r-5"], "b": ["b-1", "b-2"]}, top="r-3", turn="b", exposed={"a": NOW})
    refused(s, "b", EXPIRE, "bad_message")


def test_uno_penalty_option():
    s = uno_table(rules={"uno_penalty": 10})
    t, _ = act(s, "a", play("r-5"))
    u, ev = act(t, "b", catch("a"))
    assert event(ev, "caught")["count"] == 10
    assert hand(u, "a") == ["r-6", *PILE[::-1]]
    z = uno_table(rules={"uno_penalty": 0})
    t, _ = act(z, "a", play("r-5"))
    u, ev = act(t, "b", catch("a"))
    assert event(ev, "caught")["count"] == 0
    assert hand(u, "a") == ["r-6"] and u.exposed == []


def test_catch_window_option():
    s = uno_table(rules={"catch_window_s": 10})
    t, _ = act(s, "a", play("r-5"))
    assert t.exposed == [(0, NOW + 10_000)]
    u, ev = act(t, "c", catch("a"), NOW + 9999)
    assert kinds(ev) == ["caught"] and len(hand(u, "a")) == 3
    refused(t, "c", catch("a"), "not_exposed", NOW + 10_000)
    refused(t, None, EXPIRE, "too_early", NOW + 9999)


def test_window_closes_when_the_hand_size_changes():
    s = build({"a": ["r-5", "r-6"], "b": ["r-draw2", "b-1", "b-2"]}, top="r-3", draw=list(PILE))
    t, _ = act(s, "a", play("r-5"))
    assert t.exposed == [(0, NOW + 5000)]
    u, _ = act(t, "b", play("r-draw2"))
    v, ev = act(u, "a", DRAW, NOW + 100)
    assert kinds(ev) == ["took_stack"]
    assert v.exposed == [] and len(hand(v, "a")) == 3
    refused(v, "b", catch("a"), "not_exposed", NOW + 200)


def test_uno_flag_resets_when_the_hand_size_changes():
    s = build({"a": ["r-5"], "b": ["r-draw2", "b-1", "b-2"]}, top="r-3", turn="b", uno=["a"],
              draw=list(PILE))
    u, _ = act(s, "b", play("r-draw2"))
    assert u.uno[0] is True
    v, _ = act(u, "a", DRAW)
    assert v.uno == [False, False]


def test_one_card_received_through_a_seven_never_exposes():
    s = build({"a": ["r-7", "r-1"], "b": ["b-1", "b-2"], "c": ["y-1", "y-2"]}, top="r-3")
    t, ev = act(s, "a", play("r-7", target="b"))
    assert hand(t, "b") == ["r-1"]
    assert "exposed" not in kinds(ev) and t.exposed == []
    assert t.uno == [False, False, False]
    refused(t, "c", catch("b"), "not_exposed")
    assert next_deadline(t) is None


def test_one_card_received_through_a_zero_never_exposes():
    s = build({"a": ["r-0", "r-1"], "b": ["b-1", "b-2"], "c": ["y-1"]}, top="r-3", uno=["c"])
    t, ev = act(s, "a", play("r-0"))
    assert hand(t, "b") == ["r-1"] and hand(t, "a") == ["y-1"]
    assert "exposed" not in kinds(ev) and t.exposed == []
    assert t.uno == [False, False, False]
    refused(t, "c", catch("b"), "not_exposed")
    refused(t, "c", catch("a"), "not_exposed")


# -- Scoring --------------------------------------------------------------------------------------

def scoring_table(scores=None, **rules):
    return build({"a": ["r-5"], "b": ["r-5", "w-draw6", "y-skip"], "c": [], "d": ["g-9", "b-0"]},
                 top="r-3", eliminated=["c"], set_aside=["w-draw10"] * 25, scores=scores,
                 rules=rules or None)


def test_scoring_counts_other_active_hands_and_250_per_eliminated():
    s = scoring_table(scores={"a": 10, "b": 20, "d": 5})
    t, ev = act(s, "a", play("r-5"))
    over = event(ev, "round_over")
    # b: 5 + 50 + 20, d: 9 + 0, c eliminated: 250 (its set-aside hand does not count)
    assert over["points"] == 75 + 9 + 250
    assert over["winner"] == "a" and over["reason"] == "out"
    assert over["scores"] == {"a": 10 + 334, "b": 20, "c": 0, "d": 5}
    assert t.scores == [344, 20, 0, 5]
    assert t.points == 334
    assert "match_over" not in kinds(ev)
    g = view_for(t, "b")["game"]
    assert g["revealed"] == {"a": [], "b": ["r-5", "w-draw6", "y-skip"], "d": ["g-9", "b-0"]}
    assert g["winner"] == "a" and g["points"] == 334 and g["reason"] == "out"


def test_scoring_off():
    s = scoring_table(scores={"a": 990}, scoring=False)
    t, ev = act(s, "a", play("r-5"))
    over = event(ev, "round_over")
    assert over["points"] == 0
    assert t.scores == [990, 0, 0, 0]
    assert "match_over" not in kinds(ev)


def test_reaching_the_target_score_wins_the_match():
    s = scoring_table(scores={"a": 700})
    t, ev = act(s, "a", play("r-5"))
    assert kinds(ev)[-2:] == ["round_over", "match_over"]
    assert event(ev, "match_over")["winner"] == "a"
    assert t.scores[0] == 1034


def test_target_score_option():
    t, ev = act(scoring_table(target_score=300), "a", play("r-5"))
    assert "match_over" in kinds(ev)
    t, ev = act(scoring_table(scores={"a": 4000}, target_score=5000), "a", play("r-5"))
    assert "match_over" not in kinds(ev) and t.scores[0] == 4334


# -- the turn timer and the server's timeout ----------------------------------------------------------

def test_turn_timer_option_sets_the_deadline():
    s = build({"a": ["r-5", "r-6"], "b": ["b-1", "b-2"]}, top="r-3", rules={"turn_timer_s": 30})
    t, _ = act(s, "a", play("r-5", uno=True))
    assert t.turn_deadline == NOW + 30_000
    assert next_deadline(t) == (ActionKind.TIMEOUT, NOW + 30_000)
    assert view_for(t, "a")["game"]["turn_deadline"] == NOW + 30_000
    off = build({"a": ["r-5", "r-6"], "b": ["b-1", "b-2"]}, top="r-3", rules={"turn_timer_s": 0})
    t, _ = act(off, "a", play("r-5", uno=True))
    assert t.turn_deadline is None and next_deadline(t) is None
    refused(t, None, TIMEOUT, "too_early", NOW + 10**9)


def timed(s, at=NOW):
    s.turn_deadline = at
    return s


def test_timeout_before_the_deadline_is_too_early():
    s = timed(build({"a": ["r-5", "r-6"], "b": ["b-1", "b-2"]}, top="r-3",
                    rules={"turn_timer_s": 30}), NOW + 30_000)
    refused(s, None, TIMEOUT, "too_early", NOW + 29_999)
    refused(s, "a", TIMEOUT, "bad_message", NOW + 30_000)


def test_timeout_takes_a_stack():
    s = timed(build({"a": ["r-1", "r-2"], "b": ["w-draw6", "b-2"], "c": ["y-1", "y-2"]},
                    top="r-draw2", stack=(4, 2), turn="b", draw=list(PILE), rules={"turn_timer_s": 30}))
    t, ev = act(s, None, TIMEOUT)
    assert kinds(ev) == ["timed_out", "took_stack"]
    assert event(ev, "timed_out")["player"] == "b"
    assert event(ev, "took_stack")["count"] == 4
    assert hand(t, "b") == ["w-draw6", "b-2", "y-9", "g-9", "g-8", "g-7"]
    assert t.players[t.turn] == "c"
    assert t.turn_deadline == NOW + 30_000


def test_timeout_plays_a_playable_card_and_calls_uno():
    s = timed(build({"a": ["r-1", "r-2"], "b": ["g-8", "r-9"], "c": ["y-1", "y-2"]}, top="r-3",
                    turn="b", draw=list(PILE), rules={"turn_timer_s": 30}))
    t, ev = act(s, None, TIMEOUT)
    assert kinds(ev) == ["timed_out", "played", "uno"]
    assert event(ev, "played")["card"] == "r-9"
    assert hand(t, "b") == ["g-8"] and t.uno[1] is True and t.exposed == []
    assert t.players[t.turn] == "c"


def test_timeout_plays_a_wild_with_the_default_colour():
    s = timed(build({"a": ["r-1", "r-2"], "b": ["w-draw6", "g-8", "b-1", "g-2"], "c": ["y-1"]},
                    top="r-3", turn="b", rules={"turn_timer_s": 30}))
    t, ev = act(s, None, TIMEOUT)
    assert kinds(ev) == ["timed_out", "played", "color"]
    assert t.color == "g" and (t.stack_total, t.stack_last) == (6, 6)
    assert t.players[t.turn] == "c" and t.pending is None


def test_timeout_draws_until_playable_then_plays_it():
    s = timed(build({"a": ["r-1", "r-2"], "b": ["g-1", "g-2"], "c": ["y-1", "y-2"]}, top="r-3",
                    turn="b", draw=["r-8", "b-5", "y-4"], rules={"turn_timer_s": 30}))
    t, ev = act(s, None, TIMEOUT)
    assert kinds(ev) == ["timed_out", "drew", "drew", "drew", "played"]
    assert event(ev, "played")["card"] == "r-8"
    assert hand(t, "b") == ["g-1", "g-2", "y-4", "b-5"]
    assert t.discard[-1] == "r-8"
    assert t.players[t.turn] == "c"


def test_timeout_resolves_a_pending_choice():
    s = build({"a": ["w-draw6", "g-1", "g-2", "b-1"], "b": ["b-5", "b-6"], "c": ["y-1", "y-2"]},
              top="r-3", rules={"turn_timer_s": 30})
    t, _ = act(s, "a", play("w-draw6"))
    t = timed(t)
    u, ev = act(t, None, TIMEOUT)
    assert kinds(ev) == ["timed_out", "played", "color"]
    assert u.color == "g" and (u.stack_total, u.stack_last) == (6, 6)
    assert u.pending is None and u.players[u.turn] == "b"


def test_timeout_resolves_a_roulette_colour_for_its_target():
    s = build({"a": ["w-roulette", "r-1", "r-2"], "b": ["y-5", "y-6", "b-1"], "c": ["g-1", "g-2"]},
              top="r-3", draw=["y-9", "r-4"], rules={"turn_timer_s": 30})
    t, _ = act(s, "a", play("w-roulette"), NOW - 5000)
    assert t.players[t.turn] == "b" and t.turn_deadline == NOW + 25_000  # a fresh timer
    u, ev = act(t, None, TIMEOUT, NOW + 25_000)
    assert kinds(ev) == ["timed_out", "roulette"]
    assert event(ev, "timed_out")["player"] == "b"
    assert event(ev, "roulette")["color"] == "yellow"
    assert hand(u, "b") == ["y-5", "y-6", "b-1", "r-4", "y-9"]
    assert u.players[u.turn] == "c"


# -- resolve: the default choices --------------------------------------------------------------------

@pytest.mark.parametrize(("held", "expected"), [
    (["g-1", "b-2", "b-3", "g-4"], "green"),  # tie green/blue: red yellow green blue
    (["y-1", "b-2", "b-3"], "blue"),
    (["y-1", "r-2"], "red"),
    (["w-draw10", "w-roulette"], "red"),  # no coloured card held
])
def test_resolve_colour_is_the_colour_held_most(held, expected):
    s = build({"a": ["w-draw6", *held], "b": ["b-5", "b-6"], "c": ["y-7", "y-8"]}, top="r-3")
    t, _ = act(s, "a", play("w-draw6"))
    u, ev = act(t, None, RESOLVE)
    assert event(ev, "color")["color"] == expected
    assert u.pending is None and u.discard[-1] == "w-draw6"
    assert u.players[u.turn] == "b"


def test_resolve_target_is_the_active_opponent_with_fewest_cards():
    s = build({"a": ["r-7", "r-1", "r-2"], "b": ["b-1", "b-2", "b-3"], "c": ["y-1", "y-2"],
               "d": ["g-1", "g-2"], "e": []}, top="r-3", eliminated=["e"], set_aside=["g-5"] * 25)
    t, _ = act(s, "a", play("r-7"))
    u, ev = act(t, None, RESOLVE)
    assert event(ev, "swapped") == {"kind": "swapped", "a": "a", "b": "c"}
    assert hand(u, "a") == ["y-1", "y-2"] and hand(u, "c") == ["r-1", "r-2"]


def test_resolve_top_is_the_discard_all_itself():
    s = build({"a": ["y-discard", "y-5", "y-draw2", "r-1", "g-2"], "b": ["b-1"], "c": ["g-1"]},
              top="y-3", rules={"discard_all_top": "choose"})
    t, _ = act(s, "a", play("y-discard"))
    u, _ = act(t, None, RESOLVE)
    assert u.discard[-1] == "y-discard"
    assert hand(u, "a") == ["r-1", "g-2"]


def test_resolve_roulette_colour_uses_the_targets_hand():
    s = build({"a": ["w-roulette", "r-1", "r-2"], "b": ["b-5", "b-6", "r-3"], "c": ["g-1", "g-2"]},
              top="r-4", draw=["b-9", "r-8"])
    t, _ = act(s, "a", play("w-roulette"))
    u, ev = act(t, None, RESOLVE)
    assert event(ev, "roulette")["color"] == "blue"
    assert event(ev, "roulette")["cards"] == ["r-8", "b-9"]
    assert u.color == "b"


def test_resolve_without_a_pending_choice_is_refused():
    s = build({"a": ["r-1", "r-2"], "b": ["b-1"]}, top="r-3")
    refused(s, None, RESOLVE, "no_choice_pending")
    refused(s, "a", RESOLVE, "bad_message")
    t, _ = act(s, "a", play("r-1", uno=True))
    refused(t, None, RESOLVE, "no_choice_pending")
    refused(t, "b", CANCEL, "no_choice_pending")


# -- rules validation ---------------------------------------------------------------------------------

def rules_error(options):
    with pytest.raises(RulesError) as err:
        make_rules(options)
    assert err.value.code == "bad_rules"
    return err.value


def test_unknown_option_is_refused_naming_it():
    assert rules_error({"bogus": 1}).field == "bogus"
    assert rules_error({"preset": "printed", "colour": "red"}).field == "colour"


@pytest.mark.parametrize(("field", "value"), [
    ("draw", "sometimes"), ("draw", None),
    ("stacking", "all"),
    ("first_card", "skip"),
    ("reverse4_two_players", "both"),
    ("discard_all_top", "top"),
    ("seven", "always"),
    ("zero", "swap"),
    ("roulette_chooser", "dealer"),
    ("mercy_limit", 9), ("mercy_limit", 61), ("mercy_limit", "25"), ("mercy_limit", True),
    ("mercy_limit", 25.0),
    ("hand_size", 0), ("hand_size", 16),
    ("uno_penalty", -1), ("uno_penalty", 11),
    ("catch_window_s", 0), ("catch_window_s", 31),
    ("scoring", "yes"), ("scoring", 1), ("scoring", None),
    ("target_score", 99), ("target_score", 5001),
    ("turn_timer_s", 5), ("turn_timer_s", 9), ("turn_timer_s", 601), ("turn_timer_s", -1),
    ("preset", "house"), ("preset", 1),
])
def test_bad_option_values_are_refused_naming_the_option(field, value):
    assert rules_error({field: value}).field == field


def test_a_whole_number_too_big_for_an_integer_is_told_its_range():
    """JSON's parsers read an integer of more than 64 bits as a float (1.2e74 for 75 digits): the
    host typed a whole number, so the message gives the range, not "must be an integer"."""
    err = rules_error({"target_score": 1.2345678901234568e74})
    assert (err.field, err.message) == ("target_score", "target_score: must be between 100 and 5000")
    assert rules_error({"target_score": 250.5}).message == "target_score: must be an integer"
    assert rules_error({"target_score": 1000.0}).message == "target_score: must be an integer"


@pytest.mark.parametrize(("field", "value"), [
    ("draw", "voluntary"), ("draw", "until_playable"), ("draw", "one"),
    ("stacking", "ladder"), ("stacking", "wild_any"), ("stacking", "any"), ("stacking", "off"),
    ("first_card", "redraw"), ("first_card", "apply"),
    ("reverse4_two_players", "self"), ("reverse4_two_players", "opponent"),
    ("discard_all_top", "discard_all"), ("discard_all_top", "choose"),
    ("seven", "swap"), ("seven", "may_swap"), ("seven", "off"),
    ("zero", "pass"), ("zero", "off"),
    ("roulette_chooser", "target"), ("roulette_chooser", "player"),
    ("mercy_limit", 10), ("mercy_limit", 60),
    ("hand_size", 1), ("hand_size", 15),
    ("uno_penalty", 0), ("uno_penalty", 10),
    ("catch_window_s", 1), ("catch_window_s", 30),
    ("scoring", True), ("scoring", False),
    ("target_score", 100), ("target_score", 5000),
    ("turn_timer_s", 0), ("turn_timer_s", 10), ("turn_timer_s", 600),
])
def test_good_option_values_are_accepted(field, value):
    r = make_rules({field: value})
    assert r.to_dict()[field] == value


MERCYLESS = {
    "draw": "voluntary", "stacking": "ladder", "first_card": "redraw", "reverse4_two_players": "self",
    "discard_all_top": "discard_all", "seven": "swap", "zero": "pass", "roulette_chooser": "target",
    "mercy_limit": 25, "hand_size": 7, "uno_penalty": 2, "catch_window_s": 5, "scoring": True,
    "target_score": 1000, "turn_timer_s": 60,
}


def test_mercyless_is_the_default_preset():
    for r in (make_rules(), make_rules({}), make_rules({"preset": "mercyless"}), PRESETS["mercyless"]):
        d = r.to_dict()
        assert {k: d[k] for k in MERCYLESS} == MERCYLESS
        assert d["deck"] == STANDARD_DECK
        assert r.deck_size == 168


def test_printed_preset():
    d = make_rules({"preset": "printed"}).to_dict()
    assert {k: d[k] for k in MERCYLESS} == {**MERCYLESS, "draw": "until_playable"}
    assert d["deck"] == STANDARD_DECK


def test_options_beside_a_preset_override_single_values():
    d = make_rules({"preset": "printed", "seven": "off", "mercy_limit": 30}).to_dict()
    assert d["draw"] == "until_playable" and d["seven"] == "off" and d["mercy_limit"] == 30
    assert d["zero"] == "pass"
    # a preset resets what an earlier rules object had
    base = make_rules({"seven": "off"})
    assert make_rules({"preset": "mercyless"}, base).seven.value == "swap"


def test_rules_round_trip_through_their_wire_form():
    r = make_rules({"preset": "printed", "deck": {"r-1": 10, "y-2": 10, "g-3": 10, "b-4": 10}})
    assert make_rules(r.to_dict()) == r


def test_stored_rules_are_read_back_exactly_and_remembered_by_value():
    """``rules_from_wire`` (every load of a stored state) keys its cache by the mapping's
    value, the standard deck by a mark: each of these comes back as the rules it was written
    from, a custom deck never as the standard one, and a bad mapping is still refused."""
    from engine.rules import rules_from_wire

    custom = {"r-1": 10, "y-2": 10, "g-3": 10, "b-4": 10}
    every = [make_rules({}), make_rules({"preset": "printed"}), make_rules({"deck": custom}),
             make_rules({"seven": "off", "deck": custom}), make_rules({"turn_timer_s": 30}),
             make_rules({"deck": {**custom, "w-wild": 4}})]
    for _ in range(2):  # read afresh, then from the cache
        for r in every:
            assert rules_from_wire(r.to_dict()) == r
    assert rules_from_wire(every[2].to_dict()).deck_size == 40
    with pytest.raises(RulesError):
        rules_from_wire({**every[0].to_dict(), "deck": {"r-1": 5}})
    with pytest.raises(RulesError):
        rules_from_wire({**every[0].to_dict(), "seven": ["swap"]})  # unhashable: the long way


def test_a_custom_deck_is_used_as_data():
    deck = {"r-1": 10, "y-2": 10, "g-3": 10, "b-4": 10, "w-wild": 4, "w-draw6": 0}
    r = make_rules({"deck": deck})
    assert r.deck_size == 44
    assert dict(r.deck) == {"r-1": 10, "y-2": 10, "g-3": 10, "b-4": 10, "w-wild": 4}
    s, _ = new_game(["a", "b", "c"], r, "custom")
    assert s.card_count() == 44
    every = Counter(c for h in s.hands for c in h) + Counter(s.draw_pile) + Counter(s.discard)
    assert every == Counter({"r-1": 10, "y-2": 10, "g-3": 10, "b-4": 10, "w-wild": 4})


@pytest.mark.parametrize("deck", [
    {},
    ["r-1", "y-1", "g-1", "b-1"],
    "r-1",
    {"r-1": 5, "y-1": 5, "g-1": 5},  # no blue card
    {"r-1": 5, "y-1": 5, "g-1": 5, "b-1": 0, "w-wild": 5},  # blue only at zero
    {"r-1": 5, "y-1": 5, "g-1": 5, "b-1": 5, "x-1": 1},  # unknown code
    {"r-1": 5, "y-1": 5, "g-1": 5, "b-1": 5, "w-draw4": 1},  # no wild Draw 4
    {"r-1": 5, "y-1": 5, "g-1": 5, "b-10": 5},
    {"r-1": -1, "y-1": 5, "g-1": 5, "b-1": 5},
    {"r-1": 1.5, "y-1": 5, "g-1": 5, "b-1": 5},
    {"r-1": True, "y-1": 5, "g-1": 5, "b-1": 5},
    {"r-1": "5", "y-1": 5, "g-1": 5, "b-1": 5},
    {"r-1": 100, "y-1": 100, "g-1": 100, "b-1": 101},  # 401 cards
])
def test_bad_custom_decks_are_refused(deck):
    assert rules_error({"deck": deck}).field == "deck"


def test_deck_of_exactly_400_cards_is_accepted():
    r = make_rules({"deck": {"r-1": 100, "y-1": 100, "g-1": 100, "b-1": 100}})
    assert r.deck_size == 400


def test_eliminated_seats_are_skipped_by_turns():
    s = build({"a": ["r-1", "r-2"], "b": [], "c": ["y-1", "y-2"]}, top="r-3", eliminated=["b"],
              set_aside=["b-5"] * 25)
    t, _ = act(s, "a", play("r-1"))
    assert t.players[t.turn] == "c"
    refused(t, "b", DRAW, "eliminated")
    refused(t, "b", UNO, "eliminated")
    assert view_for(t, "c")["game"]["set_aside"] == 25
