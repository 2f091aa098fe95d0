"""Turn order and the turn itself (rules.md "A turn", "Card effects": Skip, Reverse, Skip
Everyone; "Setup": first card; pass and deadlock), every ``draw`` and ``first_card`` option value,
and the error codes of a refused action."""

from __future__ import annotations

from collections import Counter

import pytest

from engine import CARD_INFO, Kind, apply, legal_actions, make_rules, new_game
from engine.actions import CANCEL, DRAW, PASS, UNO, Action, ActionKind, catch, choose, play
from engine.cards import build_deck

from .helpers import NOW, accepted, act, build, hand, kinds, refuse
from .helpers import event as ev

# -- helpers -----------------------------------------------------------------------------------


def assert_legal_matches_apply(s, player):
    """What ``legal_actions`` lists for the turn is exactly what ``apply`` accepts."""
    legal = legal_actions(s, player)
    for a in legal:
        if a.kind in (ActionKind.PLAY, ActionKind.DRAW, ActionKind.PASS):
            assert accepted(s, player, a), a
    candidates = [play(c) for c in dict.fromkeys(hand(s, player))] + [DRAW, PASS]
    for a in candidates:
        assert accepted(s, player, a) == (a in legal), a
    return legal


def turn_of(s):
    return s.players[s.turn]


def plays_listed(legal):
    return sorted(a.card for a in legal if a.kind is ActionKind.PLAY)




# -- Skip ---------------------------------------------------------------------------------------


def test_skip_four_players_skips_the_next():
    s = build({"a": ["r-skip", "g-1", "g-2"], "b": ["r-5"], "c": ["r-6"], "d": ["r-7"]}, top="r-3")
    s2, events = act(s, "a", play("r-skip"))
    assert kinds(events) == ["played", "skipped"]
    assert ev(events, "skipped")["players"] == ["b"]
    assert turn_of(s2) == "c"
    assert s2.direction == 1
    assert s2.discard[-1] == "r-skip"
    assert hand(s2, "a") == ["g-1", "g-2"]


def test_skip_follows_the_direction():
    s = build({"a": ["r-skip", "g-1", "g-2"], "b": ["r-5"], "c": ["r-6"], "d": ["r-7"]}, top="r-3",
              direction=-1)
    s2, events = act(s, "a", play("r-skip"))
    assert ev(events, "skipped")["players"] == ["d"]
    assert turn_of(s2) == "c"


def test_skip_two_players_plays_again():
    s = build({"a": ["r-skip", "r-1", "g-2"], "b": ["r-5", "b-5"]}, top="r-3")
    s2, events = act(s, "a", play("r-skip"))
    assert ev(events, "skipped")["players"] == ["b"]
    assert turn_of(s2) == "a"
    refuse(s2, "b", play("r-5"), "not_your_turn")
    s3, _ = act(s2, "a", play("r-1"))
    assert turn_of(s3) == "b"


def test_skip_passes_over_eliminated_seats():
    s = build({"a": ["r-skip", "g-1", "g-2"], "b": [], "c": ["r-6"], "d": ["r-7"]}, top="r-3",
              eliminated=["b"])
    s2, events = act(s, "a", play("r-skip"))
    assert ev(events, "skipped")["players"] == ["c"]
    assert turn_of(s2) == "d"


def test_skip_two_active_of_four_seats_plays_again():
    s = build({"a": ["r-skip", "g-1", "g-2"], "b": [], "c": ["r-6", "y-1"], "d": []}, top="r-3",
              eliminated=["b", "d"])
    s2, events = act(s, "a", play("r-skip"))
    assert ev(events, "skipped")["players"] == ["c"]
    assert turn_of(s2) == "a"


# -- Reverse ------------------------------------------------------------------------------------


def test_reverse_four_players_flips_direction():
    s = build({"a": ["r-reverse", "g-1", "g-2"], "b": ["r-5"], "c": ["r-6"], "d": ["r-7", "r-8"]},
              top="r-3")
    s2, events = act(s, "a", play("r-reverse"))
    assert kinds(events) == ["played", "reversed"]
    assert ev(events, "reversed")["direction"] == -1
    assert s2.direction == -1
    assert turn_of(s2) == "d"
    s3, _ = act(s2, "d", play("r-8"))
    assert turn_of(s3) == "c"


def test_reverse_three_players_back_again():
    s = build({"a": ["r-reverse", "g-1", "g-2"], "b": ["r-5"], "c": ["r-reverse", "r-6", "r-7"]},
              top="r-3", turn="a")
    s2, _ = act(s, "a", play("r-reverse"))
    assert turn_of(s2) == "c"
    s3, events = act(s2, "c", play("r-reverse"))
    assert ev(events, "reversed")["direction"] == 1
    assert s3.direction == 1
    assert turn_of(s3) == "a"


def test_reverse_two_players_acts_as_skip_and_still_flips():
    s = build({"a": ["r-reverse", "g-1", "g-2"], "b": ["r-5", "b-5"]}, top="r-3")
    s2, events = act(s, "a", play("r-reverse"))
    assert kinds(events) == ["played", "reversed", "skipped"]
    assert ev(events, "skipped")["players"] == ["b"]
    assert s2.direction == -1
    assert turn_of(s2) == "a"
    refuse(s2, "b", play("r-5"), "not_your_turn")


def test_reverse_two_active_of_three_seats_acts_as_skip():
    s = build({"a": ["r-reverse", "g-1", "g-2"], "b": [], "c": ["r-5", "b-5"]}, top="r-3",
              eliminated=["b"])
    s2, events = act(s, "a", play("r-reverse"))
    assert ev(events, "skipped")["players"] == ["c"]
    assert s2.direction == -1
    assert turn_of(s2) == "a"


def test_reverse_passes_over_eliminated_seat_in_new_direction():
    s = build({"a": ["r-reverse", "g-1", "g-2"], "b": ["r-5"], "c": ["r-6"], "d": []}, top="r-3",
              eliminated=["d"])
    s2, _ = act(s, "a", play("r-reverse"))
    assert s2.direction == -1
    assert turn_of(s2) == "c"


# -- Skip Everyone ------------------------------------------------------------------------------


def test_skip_everyone_two_players():
    s = build({"a": ["r-skipall", "g-1", "g-2"], "b": ["r-5", "b-5"]}, top="r-3")
    s2, events = act(s, "a", play("r-skipall"))
    assert kinds(events) == ["played", "skipped"]
    assert ev(events, "skipped")["players"] == ["b"]
    assert turn_of(s2) == "a"
    assert s2.direction == 1


def test_skip_everyone_five_players_plays_again_at_once():
    s = build({"a": ["r-skipall", "r-1", "g-2"], "b": ["r-5"], "c": ["r-6"], "d": ["r-7"], "e": ["r-8"]},
              top="r-3")
    s2, events = act(s, "a", play("r-skipall"))
    assert sorted(ev(events, "skipped")["players"]) == ["b", "c", "d", "e"]
    assert turn_of(s2) == "a"
    assert s2.direction == 1
    for p in "bcde":
        refuse(s2, p, play(hand(s2, p)[0]), "not_your_turn")
    legal = assert_legal_matches_apply(s2, "a")
    assert plays_listed(legal) == ["r-1"]
    s3, _ = act(s2, "a", play("r-1"))
    assert turn_of(s3) == "b"


def test_skip_everyone_with_eliminated_seats():
    s = build({"a": ["r-skipall", "r-1", "g-2"], "b": [], "c": ["r-6"], "d": ["r-7"]}, top="r-3",
              eliminated=["b"])
    s2, events = act(s, "a", play("r-skipall"))
    assert sorted(ev(events, "skipped")["players"]) == ["c", "d"]
    assert turn_of(s2) == "a"
    s3, _ = act(s2, "a", play("r-1"))
    assert turn_of(s3) == "c"


# -- turn never lands on an eliminated seat -----------------------------------------------------


def test_turn_order_passes_over_eliminated_seats_both_directions():
    s = build({"a": ["r-1", "r-2", "r-9"], "b": [], "c": ["r-4", "r-5"], "d": [], "e": ["r-6", "r-7"]},
              top="r-3", eliminated=["b", "d"], draw=["g-1"] * 3)
    seen = []
    for _ in range(4):
        who = turn_of(s)
        seen.append(who)
        s, _ = act(s, who, play(hand(s, who)[0]))
    assert seen == ["a", "c", "e", "a"]
    assert turn_of(s) == "c"
    s2 = build({"a": ["r-1", "r-2", "r-9"], "b": [], "c": ["r-4", "r-5"], "d": [], "e": ["r-6", "r-7"]},
               top="r-3", eliminated=["b", "d"], direction=-1)
    s2, _ = act(s2, "a", play("r-1"))
    assert turn_of(s2) == "e"
    s2, _ = act(s2, "e", play("r-6"))
    assert turn_of(s2) == "c"


def test_eliminated_player_cannot_act():
    s = build({"a": ["r-1", "r-2"], "b": [], "c": ["r-4", "r-5"]}, top="r-3", eliminated=["b"],
              set_aside=["g-1"] * 25, draw=["g-2"])
    for action in (play("r-1"), DRAW, PASS, UNO, catch("a"), CANCEL, choose(color="red")):
        refuse(s, "b", action, "eliminated")
    assert legal_actions(s, "b") == []


# -- draw: voluntary ----------------------------------------------------------------------------


def test_voluntary_draw_never_ends_the_turn_and_can_repeat():
    s = build({"a": ["r-5", "b-1"], "b": ["y-1"], "c": ["y-2"]}, top="r-3",
              draw=["y-7", "g-6", "r-9", "b-2"])
    assert s.rules.draw.value == "voluntary"
    legal = assert_legal_matches_apply(s, "a")
    assert plays_listed(legal) == ["r-5"] and DRAW in legal and PASS not in legal
    t = apply(s, "a", DRAW, NOW)
    s2 = t.state
    mine = [e.to_wire("a") for e in t.events]
    assert mine == [{"kind": "drew", "player": "a", "count": 1, "cards": ["b-2"]}]
    assert [e.to_wire("b") for e in t.events] == [{"kind": "drew", "player": "a", "count": 1}]
    assert hand(s2, "a") == ["r-5", "b-1", "b-2"]
    assert turn_of(s2) == "a"
    assert s2.draw_pile == ["y-7", "g-6", "r-9"]
    # draw again: a playable card, but it is not played by itself
    s3, events = act(s2, "a", DRAW)
    assert ev(events, "drew")["cards"] == ["r-9"]
    assert hand(s3, "a") == ["r-5", "b-1", "b-2", "r-9"]
    assert turn_of(s3) == "a"
    assert s3.discard[-1] == "r-3"
    legal = assert_legal_matches_apply(s3, "a")
    assert plays_listed(legal) == ["r-5", "r-9"]
    refuse(s3, "a", PASS, "pass_not_allowed")
    # then play any legal card, not necessarily the drawn one
    s4, events = act(s3, "a", play("r-5"))
    assert kinds(events) == ["played"]
    assert hand(s4, "a") == ["b-1", "b-2", "r-9"]
    assert turn_of(s4) == "b"


def test_voluntary_draw_with_no_playable_card_then_play_drawn():
    s = build({"a": ["g-5", "b-1"], "b": ["y-1"], "c": ["y-2"]}, top="r-3", draw=["y-7", "r-9"])
    s2, _ = act(s, "a", DRAW)
    s3, _ = act(s2, "a", play("r-9"))
    assert turn_of(s3) == "b"
    assert s3.discard[-1] == "r-9"


def test_voluntary_draw_refused_with_nothing_left_to_draw():
    s = build({"a": ["r-5", "b-1"], "b": ["y-1"]}, top="r-3", draw=[])
    refuse(s, "a", DRAW, "draw_not_allowed")


def test_voluntary_draw_reshuffles_discard_when_pile_empty():
    s = build({"a": ["g-5", "b-1"], "b": ["y-1"]}, top="r-3", discard=["y-8", "g-8"], draw=[])
    s2, events = act(s, "a", DRAW)
    assert kinds(events) == ["reshuffled", "drew"]
    assert ev(events, "reshuffled")["count"] == 2
    assert s2.discard == ["r-3"]
    assert len(hand(s2, "a")) == 3 and hand(s2, "a")[2] in ("y-8", "g-8")
    assert len(s2.draw_pile) == 1
    assert turn_of(s2) == "a"


# -- draw: until_playable -----------------------------------------------------------------------

UP = {"draw": "until_playable"}


def test_until_playable_draw_refused_with_a_playable_card():
    s = build({"a": ["r-5", "b-1"], "b": ["y-1"]}, top="r-3", draw=["g-1", "g-2"], rules=UP)
    refuse(s, "a", DRAW, "draw_not_allowed")
    legal = assert_legal_matches_apply(s, "a")
    assert DRAW not in legal and plays_listed(legal) == ["r-5"]


@pytest.mark.parametrize("card", ["w-draw6", "g-3", "b-skip"])
def test_until_playable_refuses_draw_for_wild_number_or_symbol_match(card):
    s = build({"a": [card, "b-1"], "b": ["y-1"]}, top="r-3" if card != "b-skip" else "r-skip",
              draw=["g-1", "g-2"], rules=UP)
    refuse(s, "a", DRAW, "draw_not_allowed")


def test_until_playable_draws_until_playable_then_must_play_it():
    pile = ["g-2", "r-9", "g-1", "y-2", "b-8"]  # drawn from the end: b-8, y-2, g-1, r-9
    s = build({"a": ["b-5", "g-6"], "b": ["y-1", "y-4"], "c": ["y-2"]}, top="r-3", draw=pile,
              rules={"preset": "printed"})
    t = apply(s, "a", DRAW, NOW)
    s2 = t.state
    events = [e.to_wire("a") for e in t.events]
    assert events == [{"kind": "drew", "player": "a", "count": 4, "cards": ["b-8", "y-2", "g-1", "r-9"]}]
    assert [e.to_wire("c") for e in t.events] == [{"kind": "drew", "player": "a", "count": 4}]
    assert hand(s2, "a") == ["b-5", "g-6", "b-8", "y-2", "g-1", "r-9"]
    assert s2.draw_pile == ["g-2"]
    assert turn_of(s2) == "a"
    assert s2.drawn == "r-9"
    # only the drawn card may be played now
    refuse(s2, "a", play("b-5"), "must_play_drawn")
    refuse(s2, "a", DRAW, "must_play_drawn", "draw_not_allowed")
    refuse(s2, "a", PASS, "must_play_drawn", "pass_not_allowed")
    legal = assert_legal_matches_apply(s2, "a")
    assert [a for a in legal if a.kind is not ActionKind.UNO] == [play("r-9")]
    s3, events = act(s2, "a", play("r-9"))
    assert kinds(events) == ["played"]
    assert turn_of(s3) == "b"
    assert s3.drawn is None


def test_until_playable_other_playable_card_refused_after_draw():
    # the drawn y-3 matches the number; g-5 in hand becomes playable only through a colour change,
    # but a card that was already drawn earlier in the run (unplayable) cannot be played either
    s = build({"a": ["b-5", "g-6"], "b": ["y-1", "y-4"]}, top="r-3", draw=["g-9", "y-3", "b-7"],
              rules=UP)
    s2, _ = act(s, "a", DRAW)
    assert hand(s2, "a") == ["b-5", "g-6", "b-7", "y-3"]
    refuse(s2, "a", play("b-7"), "must_play_drawn")
    refuse(s2, "a", play("g-6"), "must_play_drawn")
    s3, _ = act(s2, "a", play("y-3"))
    assert s3.color == "y"
    assert turn_of(s3) == "b"


def test_until_playable_drawn_wild_still_needs_its_colour():
    s = build({"a": ["b-5", "g-6"], "b": ["y-1", "y-4"]}, top="r-3", draw=["g-9", "w-draw6"], rules=UP)
    s2, _ = act(s, "a", DRAW)
    assert s2.drawn == "w-draw6"
    s3, events = act(s2, "a", play("w-draw6"))
    assert events == [] and s3.pending is not None and s3.pending.choice.value == "color"
    s4, events = act(s3, "a", choose(color="green"))
    assert kinds(events)[:2] == ["played", "color"]
    assert s4.color == "g"
    assert (s4.stack_total, s4.stack_last) == (6, 6)
    assert turn_of(s4) == "b"


def test_until_playable_runs_out_without_a_playable_card_then_pass():
    s = build({"a": ["b-5", "g-6"], "b": ["y-1", "y-4"]}, top="r-3", draw=["g-9", "y-8"], rules=UP)
    s2, events = act(s, "a", DRAW)
    assert ev(events, "drew")["count"] == 2
    assert s2.draw_pile == [] and s2.drawn is None
    refuse(s2, "a", DRAW, "draw_not_allowed")
    legal = assert_legal_matches_apply(s2, "a")
    assert legal == [PASS]
    s3, events = act(s2, "a", PASS)
    assert kinds(events) == ["passed"]
    assert turn_of(s3) == "b"


# -- draw: one ----------------------------------------------------------------------------------

ONE = {"draw": "one"}


def test_one_may_draw_holding_a_playable_card_then_pass_or_play_drawn_only():
    s = build({"a": ["r-5", "b-1"], "b": ["y-1", "y-4"], "c": ["g-4"]}, top="r-3",
              draw=["g-1", "b-8"], rules=ONE)
    legal = assert_legal_matches_apply(s, "a")
    assert DRAW in legal and plays_listed(legal) == ["r-5"]
    s2, events = act(s, "a", DRAW)
    assert events == [{"kind": "drew", "player": "a", "count": 1, "cards": ["b-8"]}]
    assert hand(s2, "a") == ["r-5", "b-1", "b-8"]
    assert turn_of(s2) == "a"
    # b-8 is not playable: only pass is left
    refuse(s2, "a", play("r-5"), "must_play_drawn")
    refuse(s2, "a", play("b-8"), "illegal_card", "must_play_drawn")
    refuse(s2, "a", DRAW, "draw_not_allowed")
    legal = assert_legal_matches_apply(s2, "a")
    assert legal == [PASS]
    s3, events = act(s2, "a", PASS)
    assert kinds(events) == ["passed"]
    assert turn_of(s3) == "b"
    assert hand(s3, "a") == ["r-5", "b-1", "b-8"]
    assert s3.draw_pile == ["g-1"]
    assert s3.winner is None


def test_one_drawn_playable_card_may_be_played_or_passed():
    s = build({"a": ["r-5", "b-1"], "b": ["y-1", "y-4"], "c": ["g-4"]}, top="r-3",
              draw=["g-1", "r-9"], rules=ONE)
    s2, _ = act(s, "a", DRAW)
    refuse(s2, "a", play("r-5"), "must_play_drawn")
    refuse(s2, "a", DRAW, "draw_not_allowed")
    legal = assert_legal_matches_apply(s2, "a")
    assert sorted(legal) == sorted([play("r-9"), PASS])
    s3, events = act(s2, "a", play("r-9"))
    assert kinds(events) == ["played"]
    assert turn_of(s3) == "b"
    assert s3.discard[-1] == "r-9"
    s4, _ = act(s2, "a", PASS)
    assert turn_of(s4) == "b"
    assert "r-9" in hand(s4, "a")


def test_one_draw_then_pass_by_everyone_does_not_end_the_round():
    # every draw resets the pass count: passes after drawing are no deadlock while cards remain
    s = build({"a": ["g-5", "b-1"], "b": ["y-1", "y-4"], "c": ["g-4", "b-6"]}, top="r-3",
              draw=["r-1", "g-1", "b-8", "y-8", "g-8", "b-9", "y-9"], rules=ONE)
    for _ in range(2):
        for p in "abc":
            assert turn_of(s) == p
            s, _ = act(s, p, DRAW)
            s, _ = act(s, p, PASS)
            assert s.winner is None
    assert s.draw_pile == ["r-1"]
    s, events = act(s, "a", DRAW)
    assert ev(events, "drew")["cards"] == ["r-1"]
    s, _ = act(s, "a", play("r-1"))
    assert s.discard[-1] == "r-1" and turn_of(s) == "b"


def test_one_pass_not_allowed_before_drawing():
    s = build({"a": ["g-5", "b-1"], "b": ["y-1"]}, top="r-3", draw=["g-1", "r-9"], rules=ONE)
    refuse(s, "a", PASS, "pass_not_allowed")


# -- pass and deadlock --------------------------------------------------------------------------


def test_pass_refused_while_a_card_can_be_drawn():
    s = build({"a": ["g-5", "b-1"], "b": ["y-1"]}, top="r-3", draw=["g-1"])
    refuse(s, "a", PASS, "pass_not_allowed")


def test_pass_refused_while_discard_can_be_reshuffled():
    s = build({"a": ["g-5", "b-1"], "b": ["y-1"]}, top="r-3", discard=["y-9"], draw=[])
    refuse(s, "a", PASS, "pass_not_allowed")
    assert DRAW in legal_actions(s, "a")


def test_pass_refused_while_set_aside_hands_can_be_reshuffled():
    s = build({"a": ["g-5", "b-1"], "b": ["y-1"], "c": []}, top="r-3", draw=[],
              eliminated=["c"], set_aside=["y-9", "y-8"])
    refuse(s, "a", PASS, "pass_not_allowed")
    s2, events = act(s, "a", DRAW)
    assert kinds(events) == ["reshuffled", "drew"]
    assert s2.set_aside == []


def test_pass_refused_holding_a_playable_card_when_exhausted():
    s = build({"a": ["g-5", "r-1"], "b": ["y-1"]}, top="r-3", draw=[])
    refuse(s, "a", PASS, "pass_not_allowed")
    refuse(s, "a", DRAW, "draw_not_allowed")
    legal = assert_legal_matches_apply(s, "a")
    assert plays_listed(legal) == ["r-1"] and PASS not in legal


def test_pass_legal_when_nothing_can_be_drawn_or_played():
    s = build({"a": ["g-5", "b-1"], "b": ["y-1", "y-2"], "c": ["b-4", "g-4"]}, top="r-3", draw=[])
    refuse(s, "a", DRAW, "draw_not_allowed")
    legal = assert_legal_matches_apply(s, "a")
    assert legal == [PASS]
    s2, events = act(s, "a", PASS)
    assert events == [{"kind": "passed", "player": "a"}]
    assert turn_of(s2) == "b"
    assert s2.winner is None
    assert s2.hands == s.hands
    refuse(s, "b", PASS, "not_your_turn")


def test_every_active_player_passing_ends_round_fewest_cards_wins():
    s = build({"a": ["g-5", "b-1", "g-9"], "b": ["y-1"], "c": ["b-4", "g-4"]}, top="r-3", draw=[],
              uno=["b"])
    s, _ = act(s, "a", PASS)
    s, _ = act(s, "b", PASS)
    assert s.winner is None
    s, events = act(s, "c", PASS)
    assert s.winner == s.players.index("b")
    assert s.end_reason == "deadlock"
    over = ev(events, "round_over")
    assert over["winner"] == "b"
    assert over["reason"] == "deadlock"
    points = sum(CARD_INFO[c].points for c in ["g-5", "b-1", "g-9", "b-4", "g-4"])
    assert over["points"] == points
    assert s.scores == [0, points, 0]
    refuse(s, "a", PASS, "game_over")


def test_deadlock_tie_goes_to_last_passer_first():
    # b and c tie on one card; c passed last, so c is first in turn order from the last passer
    s = build({"a": ["g-5", "b-1"], "b": ["y-1"], "c": ["b-4"]}, top="r-3", draw=[], uno=["b", "c"])
    for p in "abc":
        s, events = act(s, p, PASS)
    assert ev(events, "round_over")["winner"] == "c"


def test_deadlock_tie_follows_current_direction():
    # direction -1: turn order a, d, c, b; b passes last; c and d tie; from b going backwards: a, d
    s = build({"a": ["g-5", "b-1", "g-6"], "b": ["y-1", "y-2"], "c": ["b-4"], "d": ["g-4"]},
              top="r-3", draw=[], direction=-1, uno=["c", "d"])
    for p in "adcb":
        assert turn_of(s) == p
        s, events = act(s, p, PASS)
    assert ev(events, "round_over")["winner"] == "d"


def test_deadlock_tie_including_last_passer():
    s = build({"a": ["g-5"], "b": ["y-1"], "c": ["b-4"]}, top="r-3", draw=[], uno=["a", "b", "c"],
              turn="b")
    for p in "bca":
        s, events = act(s, p, PASS)
    assert ev(events, "round_over")["winner"] == "a"


def test_deadlock_counts_only_active_players():
    s = build({"a": ["g-5", "b-1"], "b": [], "c": ["b-4", "g-4", "y-9"]}, top="r-3", draw=[],
              eliminated=["b"])
    s, _ = act(s, "a", PASS)
    assert turn_of(s) == "c"
    s, events = act(s, "c", PASS)
    over = ev(events, "round_over")
    assert over["winner"] == "a"
    assert over["points"] == sum(CARD_INFO[c].points for c in ["b-4", "g-4", "y-9"]) + 250


def test_a_play_or_draw_resets_the_pass_count():
    # a and b pass, c plays (count back to 0), a draws the reshuffled card (still 0) and passes:
    # the round must go on until b and c have passed again
    s = build({"a": ["g-6", "y-8"], "b": ["g-5", "y-9"], "c": ["w-wild", "g-2", "y-2"]}, top="r-3",
              draw=[])
    s, _ = act(s, "a", PASS)
    s, _ = act(s, "b", PASS)
    s, _ = act(s, "c", play("w-wild", color="blue"))
    assert s.passes == 0
    assert turn_of(s) == "a"
    refuse(s, "a", PASS, "pass_not_allowed")  # the old top can be reshuffled and drawn
    s, events = act(s, "a", DRAW)
    assert ev(events, "drew")["cards"] == ["r-3"]
    s, _ = act(s, "a", PASS)
    assert s.winner is None
    s, _ = act(s, "b", PASS)
    assert s.winner is None
    s, events = act(s, "c", PASS)
    # a 3 cards, b 2, c 2: tie between b and c, c passed last
    assert ev(events, "round_over")["winner"] == "c"


# -- first card ---------------------------------------------------------------------------------

PLAYERS = ["p0", "p1", "p2", "p3"]


def find_game(rules, pred, players=PLAYERS, limit=3000):
    for i in range(limit):
        s, events = new_game(players, rules, f"seed-{i}")
        if pred(s):
            return s, [e.to_wire(None) for e in events], f"seed-{i}"
    raise AssertionError("no seed found")


def conserved(s):
    cards = Counter(c for h in s.hands for c in h) + Counter(s.draw_pile) + Counter(s.discard)
    return cards == Counter(build_deck(s.rules.deck))


def test_new_game_deals_and_seat_after_dealer_starts():
    s, events = new_game(PLAYERS, make_rules(), "deal")
    assert [len(h) for h in s.hands] == [7, 7, 7, 7]
    assert s.dealer == 3 and s.turn == 0 and s.direction == 1
    assert conserved(s) and s.card_count() == 168
    started = events[0].to_wire(None)
    assert started["kind"] == "started" and started["dealer"] == "p3" and started["top"] == s.discard[-1]
    s2, _ = new_game(PLAYERS, make_rules(), "deal", dealer=1)
    assert s2.turn == 2
    s3, _ = new_game(PLAYERS, make_rules(), "deal")
    assert s3 == s  # same seed, same game


def test_first_card_redraw_leaves_action_cards_and_flips_to_a_number():
    rules = make_rules()
    s, events, _ = find_game(rules, lambda s: len(s.discard) >= 3)
    assert all(CARD_INFO[c].kind is not Kind.NUMBER for c in s.discard[:-1])
    top = CARD_INFO[s.discard[-1]]
    assert top.kind is Kind.NUMBER
    assert s.color == top.color
    assert s.turn == 0 and s.direction == 1
    assert [len(h) for h in s.hands] == [7, 7, 7, 7]
    assert (s.stack_total, s.stack_last) == (0, 0)
    assert kinds(events) == ["started"]
    assert conserved(s)


def test_first_card_redraw_leaves_a_wild_in_the_discard_pile():
    s, events, _ = find_game(make_rules(), lambda s: CARD_INFO[s.discard[0]].wild)
    assert CARD_INFO[s.discard[-1]].kind is Kind.NUMBER
    assert s.turn == 0 and s.pending is None
    assert kinds(events) == ["started"]


@pytest.mark.parametrize("preset", ["mercyless", "printed"])
def test_first_card_redraw_is_default(preset):
    assert make_rules({"preset": preset}).first_card.value == "redraw"


APPLY = make_rules({"first_card": "apply"})


def top_kind(kind):
    return lambda s: CARD_INFO[s.discard[-1]].kind is kind


def test_first_card_apply_skip_skips_first_player():
    s, events, _ = find_game(APPLY, top_kind(Kind.SKIP))
    assert len(s.discard) == 1
    assert s.color == CARD_INFO[s.discard[0]].color
    assert ev(events, "skipped")["players"] == ["p0"]
    assert s.turn == 1 and s.direction == 1
    assert [len(h) for h in s.hands] == [7, 7, 7, 7]


def test_first_card_apply_reverse_dealer_plays_first():
    s, events, _ = find_game(APPLY, top_kind(Kind.REVERSE))
    assert ev(events, "reversed")["direction"] == -1
    assert s.direction == -1
    assert s.turn == s.dealer == 3


def test_first_card_apply_skip_everyone_dealer_plays_first():
    s, _, _ = find_game(APPLY, top_kind(Kind.SKIP_ALL))
    assert s.turn == s.dealer == 3
    assert s.direction == 1


@pytest.mark.parametrize(("kind", "count"), [(Kind.DRAW2, 2), (Kind.DRAW4, 4)])
def test_first_card_apply_draw_first_player_draws_and_is_skipped(kind, count):
    s, events, _ = find_game(APPLY, top_kind(kind))
    assert [len(h) for h in s.hands] == [7 + count, 7, 7, 7]
    drew = ev(events, "drew")
    assert drew == {"kind": "drew", "player": "p0", "count": count}
    assert ev(events, "skipped")["players"] == ["p0"]
    assert s.turn == 1
    assert (s.stack_total, s.stack_last) == (0, 0)
    assert conserved(s)


@pytest.mark.parametrize("kind", [Kind.NUMBER, Kind.DISCARD_ALL])
def test_first_card_apply_other_coloured_cards_no_effect(kind):
    s, events, _ = find_game(APPLY, top_kind(kind))
    assert len(s.discard) == 1
    assert kinds(events) == ["started"]
    assert s.turn == 0 and s.direction == 1
    assert [len(h) for h in s.hands] == [7, 7, 7, 7]


@pytest.mark.timeout(30)  # the bug this guards against never returned from new_game
@pytest.mark.parametrize("wilds", [19, 20])  # one card or two left after the deal
def test_first_card_apply_with_only_wilds_left_keeps_the_wild_on_top(wilds):
    """A custom deck whose draw pile holds only wilds after the deal: putting the flipped wild
    back would flip wilds for ever, so it stays on top (red, no effect), as in ``redraw``."""
    deck = {"r-1": 1, "y-1": 1, "g-1": 1, "b-1": 1, "w-wild": wilds}
    rules = make_rules({"first_card": "apply", "deck": deck, "hand_size": 11})
    players = ["p0", "p1"]
    s, events, _ = find_game(rules, lambda s: all(CARD_INFO[c].wild for c in s.draw_pile + s.discard),
                             players=players, limit=200)
    assert len(s.discard) == 1 and CARD_INFO[s.discard[0]].wild
    assert s.color == "r" and s.turn == 0 and s.direction == 1 and s.pending is None
    assert kinds(events) == ["started"]
    assert conserved(s)


def test_first_card_apply_wild_goes_back_into_the_pile():
    redraw = make_rules()

    def first_is_wild_then_coloured(seed_state):
        d = seed_state.discard
        return len(d) >= 2 and CARD_INFO[d[0]].wild and not CARD_INFO[d[1]].wild

    r, _, seed = find_game(redraw, first_is_wild_then_coloured)
    s, _ = new_game(PLAYERS, APPLY, seed)
    wild, nxt = r.discard[0], r.discard[1]
    after_deal = r.draw_pile + r.discard[::-1]  # the pile as dealt, top card last
    assert s.hands == r.hands
    assert s.discard == [nxt]
    assert not CARD_INFO[s.discard[-1]].wild
    # the wild is somewhere in the draw pile; without it the pile is the dealt pile minus two
    idx = [i for i, c in enumerate(s.draw_pile) if c == wild
           and s.draw_pile[:i] + s.draw_pile[i + 1:] == after_deal[:-2]]
    assert idx
    assert conserved(s)


def test_first_card_apply_wild_goes_back_at_a_random_place():
    places = set()
    for i in range(400):
        r, _ = new_game(PLAYERS, make_rules(), f"r-{i}")
        d = r.discard
        if not (len(d) >= 2 and CARD_INFO[d[0]].wild and not CARD_INFO[d[1]].wild):
            continue
        s, _ = new_game(PLAYERS, APPLY, f"r-{i}")
        rest = (r.draw_pile + r.discard[::-1])[:-2]
        places.update(k for k, c in enumerate(s.draw_pile)
                      if c == d[0] and s.draw_pile[:k] + s.draw_pile[k + 1:] == rest)
    assert len(places) >= 3


def test_first_card_apply_top_is_never_wild():
    for i in range(200):
        s, _ = new_game(PLAYERS, APPLY, f"w-{i}")
        assert not CARD_INFO[s.discard[-1]].wild
        assert len(s.discard) == 1
        assert conserved(s)


# -- error codes --------------------------------------------------------------------------------


def base():
    return build({"a": ["r-5", "b-1", "g-2"], "b": ["r-6", "y-1"], "c": ["r-7", "g-9"]}, top="r-3",
                 draw=["g-1", "g-3"])


def test_not_your_turn():
    s = base()
    refuse(s, "b", play("r-6"), "not_your_turn")
    refuse(s, "b", DRAW, "not_your_turn")
    refuse(s, "b", PASS, "not_your_turn")
    assert [a for a in legal_actions(s, "b")] == []


def test_illegal_card():
    s = base()
    refuse(s, "a", play("b-1"), "illegal_card")
    refuse(s, "a", play("g-2"), "illegal_card")
    assert play("b-1") not in legal_actions(s, "a")


def test_not_in_hand():
    s = base()
    refuse(s, "a", play("r-6"), "not_in_hand")  # b's card
    refuse(s, "a", play("r-9"), "not_in_hand")
    refuse(s, "a", play("x-1"), "not_in_hand", "bad_message")


def test_game_over_refuses_everything():
    s = build({"a": ["r-5"], "b": ["r-6", "y-1"], "c": ["r-7", "g-9"]}, top="r-3", draw=["g-1"])
    s2, events = act(s, "a", play("r-5"))
    assert ev(events, "round_over")["winner"] == "a"
    assert s2.over
    for player, action in [("b", play("r-6")), ("b", DRAW), ("b", PASS), ("c", DRAW),
                           ("a", DRAW), ("zed", DRAW), ("b", UNO)]:
        refuse(s2, player, action, "game_over")
    assert legal_actions(s2, "b") == []


def test_spectator():
    s = base()
    for action in (play("r-5"), DRAW, PASS, UNO, catch("a")):
        refuse(s, "zed", action, "spectator")
    refuse(s, None, play("r-5"), "spectator")
    assert legal_actions(s, "zed") == []


def test_eliminated_code_even_on_turn_related_actions():
    s = build({"a": ["r-5", "b-1"], "b": [], "c": ["r-7", "g-9"]}, top="r-3", draw=["g-1"],
              eliminated=["b"])
    refuse(s, "b", play("r-5"), "eliminated")
    refuse(s, "b", DRAW, "eliminated")


def test_legal_actions_match_apply_on_ordinary_turn():
    s = build({"a": ["r-5", "b-3", "g-skip", "w-draw6", "y-7", "w-roulette"], "b": ["g-1"], "c": ["y-1"]},
              top="r-3", draw=["g-1"])
    legal = assert_legal_matches_apply(s, "a")
    assert plays_listed(legal) == ["b-3", "r-5", "w-draw6", "w-roulette"]
    assert DRAW in legal and PASS not in legal
    assert Action(ActionKind.PLAY, "y-7") not in legal
