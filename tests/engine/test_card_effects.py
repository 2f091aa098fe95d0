"""Scenario tests of the card effects of rules.md ("Card effects", "Choices"):

Discard All (both ``discard_all_top`` modes), the 7 swap (``seven`` option), the 0 pass
(``zero`` option), Wild Color Roulette (``roulette_chooser`` option), the wild colour pause
with ``choose``/``cancel``, and the errors of choices.
"""

from __future__ import annotations

from collections import Counter

from engine import apply, view_for
from engine.actions import CANCEL, DRAW, PASS, UNO, catch, choose, play
from tests.engine.helpers import NOW, act, build, conserved, event, hand, kinds, pending, refused

# -- Discard All --------------------------------------------------------------------------------

def test_discard_all_default_leaves_discard_all_on_top_with_extras_under():
    s = build({"a": ["y-discard", "r-1", "y-5", "w-draw6", "y-9"], "b": ["g-1", "g-2"],
               "c": ["b-1", "b-2"]}, top="y-3", draw=["g-9"])
    t, ev = act(s, "a", play("y-discard"))
    assert hand(t, "a") == ["r-1", "w-draw6"]
    assert t.discard[0] == "y-3"
    assert t.discard[-1] == "y-discard"
    assert Counter(t.discard[1:-1]) == Counter(["y-5", "y-9"])
    assert kinds(ev) == ["played", "discarded"]
    assert event(ev, "played")["card"] == "y-discard"
    assert sorted(event(ev, "discarded")["cards"]) == ["y-5", "y-9"]
    assert event(ev, "discarded")["player"] == "a"
    assert t.color == "y"
    assert t.players[t.turn] == "b"
    assert t.pending is None
    conserved(s, t)


def test_discard_all_extra_cards_trigger_nothing():
    extras = ["y-draw2", "y-draw4", "y-skip", "y-skipall", "y-reverse", "y-7", "y-0"]
    s = build({"a": ["y-discard", *extras, "r-1", "g-2"], "b": ["b-1", "b-2"], "c": ["g-5", "g-6"]},
              top="y-3", draw=["b-9", "r-9"])
    t, ev = act(s, "a", play("y-discard"))
    assert hand(t, "a") == ["r-1", "g-2"]
    assert t.discard[-1] == "y-discard"
    assert Counter(t.discard[1:-1]) == Counter(extras)
    # no stack, no skip, no reverse, no swap, no pass of hands: just the next player's turn
    assert kinds(ev) == ["played", "discarded"]
    assert t.stack_total == 0 and t.stack_last == 0
    assert t.direction == 1
    assert t.players[t.turn] == "b"
    assert hand(t, "b") == ["b-1", "b-2"]
    assert hand(t, "c") == ["g-5", "g-6"]
    assert t.draw_pile == ["b-9", "r-9"]


def test_discard_all_without_other_cards_of_its_colour_is_a_plain_play():
    s = build({"a": ["y-discard", "r-1", "g-2"], "b": ["b-1"], "c": ["g-5"]}, top="y-3")
    t, ev = act(s, "a", play("y-discard"))
    assert kinds(ev) == ["played"]
    assert t.discard == ["y-3", "y-discard"]
    assert hand(t, "a") == ["r-1", "g-2"]
    assert t.players[t.turn] == "b"


def test_discard_all_down_to_one_card_exposes_or_calls_uno():
    s = build({"a": ["y-discard", "y-5", "r-1"], "b": ["b-1", "b-2"]}, top="y-3")
    t, ev = act(s, "a", play("y-discard"))
    assert hand(t, "a") == ["r-1"]
    assert kinds(ev) == ["played", "discarded", "exposed"]
    assert t.exposed == [(0, NOW + 5000)]
    t, ev = act(s, "a", play("y-discard", uno=True))
    assert kinds(ev) == ["played", "discarded", "uno"]
    assert t.uno[0] is True and t.exposed == []


def test_discard_all_emptying_the_hand_wins():
    s = build({"a": ["y-discard", "y-5", "y-7", "y-draw2"], "b": ["b-1", "b-2"], "c": ["g-1"]},
              top="y-3")
    t, ev = act(s, "a", play("y-discard"))
    assert hand(t, "a") == []
    assert t.winner == 0 and t.end_reason == "out"
    assert event(ev, "round_over")["winner"] == "a"
    assert "swapped" not in kinds(ev)  # the y-7 among the extras swaps nothing
    assert hand(t, "b") == ["b-1", "b-2"]
    assert t.stack_last == 0
    refused(t, "b", DRAW, "game_over")


def test_discard_all_choose_pauses_on_top_then_choose_sets_the_top():
    s = build({"a": ["y-discard", "y-5", "r-1", "y-draw2", "g-4"], "b": ["b-1", "b-2"],
               "c": ["g-1", "g-2"]}, top="y-3", rules={"discard_all_top": "choose"})
    t, ev = act(s, "a", play("y-discard"))
    assert ev == []
    assert t.pending is not None and t.pending.choice.value == "top"
    assert t.pending.player == 0 and t.pending.card == "y-discard"
    assert hand(t, "a") == hand(s, "a")  # the card stays in the hand
    assert t.discard == s.discard and t.turn == s.turn
    assert view_for(t, "a")["game"]["pending"] == {"player": "a", "choice": "top", "card": "y-discard"}
    assert view_for(t, "b")["game"]["pending"] == {"player": "a", "choice": "top"}
    assert sorted(view_for(t, "a")["game"]["legal"]["choose"]) == ["y-5", "y-discard", "y-draw2"]
    u, ev = act(t, "a", choose(top="y-5"))
    assert kinds(ev) == ["played", "discarded"]
    assert u.discard[-1] == "y-5"
    assert Counter(u.discard[1:-1]) == Counter(["y-discard", "y-draw2"])
    assert u.color == "y"
    assert hand(u, "a") == ["r-1", "g-4"]
    assert u.players[u.turn] == "b"
    assert u.pending is None


def test_discard_all_choose_takes_top_in_the_play_and_the_top_triggers_nothing():
    s = build({"a": ["y-discard", "y-5", "r-1", "y-draw2", "y-skip", "g-4"], "b": ["b-1", "b-2"],
               "c": ["g-1", "g-2"]}, top="y-3", rules={"discard_all_top": "choose"})
    t, ev = act(s, "a", play("y-discard", top="y-draw2"))
    assert t.pending is None
    assert t.discard[-1] == "y-draw2"
    assert Counter(t.discard[1:-1]) == Counter(["y-discard", "y-5", "y-skip"])
    assert t.color == "y"
    assert t.stack_last == 0 and t.stack_total == 0  # a Draw 2 on top draws nothing
    assert t.players[t.turn] == "b"
    assert kinds(ev) == ["played", "discarded"]


def test_discard_all_choose_top_may_be_the_discard_all_itself():
    s = build({"a": ["y-discard", "y-5", "r-1"], "b": ["b-1"], "c": ["g-1"]}, top="y-3",
              rules={"discard_all_top": "choose"})
    t, _ = act(s, "a", play("y-discard"))
    u, _ = act(t, "a", choose(top="y-discard"))
    assert u.discard == ["y-3", "y-5", "y-discard"]
    assert hand(u, "a") == ["r-1"]


def test_discard_all_choose_does_not_pause_without_other_cards_of_its_colour():
    s = build({"a": ["y-discard", "r-1", "g-2"], "b": ["b-1"], "c": ["g-1"]}, top="y-3",
              rules={"discard_all_top": "choose"})
    t, ev = act(s, "a", play("y-discard"))
    assert t.pending is None
    assert kinds(ev) == ["played"]
    assert t.discard[-1] == "y-discard"
    assert t.players[t.turn] == "b"


def test_discard_all_choose_emptying_the_hand_wins_without_a_pause():
    # docs/engine.md: "No pause when the Discard All ... empties the hand"; rules.md: emptying
    # the hand through Discard All wins.
    s = build({"a": ["y-discard", "y-5"], "b": ["b-1", "b-2"], "c": ["g-1"]}, top="y-3",
              rules={"discard_all_top": "choose"})
    t, ev = act(s, "a", play("y-discard"))
    assert t.pending is None
    assert hand(t, "a") == []
    assert t.winner == 0
    assert "round_over" in kinds(ev)


def test_discard_all_choose_emptying_the_hand_with_a_top_wins():
    s = build({"a": ["y-discard", "y-5"], "b": ["b-1", "b-2"], "c": ["g-1"]}, top="y-3",
              rules={"discard_all_top": "choose"})
    t, ev = act(s, "a", play("y-discard", top="y-5"))
    assert hand(t, "a") == []
    assert t.winner == 0
    assert event(ev, "round_over")["reason"] == "out"


def test_discard_all_bad_top_is_refused():
    rules = {"discard_all_top": "choose"}
    s = build({"a": ["y-discard", "y-5", "r-1", "y-7"], "b": ["b-1"], "c": ["g-1"]}, top="y-3",
              rules=rules)
    refused(s, "a", play("y-discard", top="r-1"), "bad_top")  # not among the discarded cards
    refused(s, "a", play("y-discard", top="g-9"), "bad_top")  # not even in the hand
    refused(s, "a", play("y-5", top="y-5"), "bad_top")  # top on another card
    d = build({"a": ["y-discard", "y-5", "r-1"], "b": ["b-1"], "c": ["g-1"]}, top="y-3")
    refused(d, "a", play("y-discard", top="y-5"), "bad_top")  # top outside `choose`
    t, _ = act(s, "a", play("y-discard"))
    refused(t, "a", choose(top="r-1"), "bad_top")
    refused(t, "a", choose(color="yellow"), "bad_top")  # the pending choice is a top
    refused(t, "b", choose(top="y-5"), "no_choice_pending")


# -- 7 ------------------------------------------------------------------------------------------

def test_seven_swaps_with_the_chosen_player():
    s = build({"a": ["r-7", "r-1", "g-2"], "b": ["b-1"], "c": ["y-1", "y-2", "y-3"]}, top="r-3")
    t, ev = act(s, "a", play("r-7", target="c"))
    assert hand(t, "a") == ["y-1", "y-2", "y-3"]
    assert hand(t, "c") == ["r-1", "g-2"]
    assert hand(t, "b") == ["b-1"]
    assert kinds(ev) == ["played", "swapped"]
    assert event(ev, "swapped") == {"kind": "swapped", "a": "a", "b": "c"}
    assert t.discard[-1] == "r-7" and t.color == "r"
    assert t.players[t.turn] == "b"
    conserved(s, t)


def test_seven_without_target_pauses_on_a_target_choice():
    s = build({"a": ["r-7", "r-1", "g-2"], "b": ["b-1", "b-2"], "c": ["y-1"]}, top="r-3")
    t, ev = act(s, "a", play("r-7"))
    assert ev == []
    assert t.pending.choice.value == "target" and t.pending.player == 0
    assert hand(t, "a") == ["r-7", "r-1", "g-2"]
    # swap is mandatory: oneself is not a choice
    assert sorted(view_for(t, "a")["game"]["legal"]["choose"]) == ["b", "c"]
    refused(t, "a", choose(target="a"), "bad_target")
    refused(t, "a", choose(color="red"), "bad_target")
    u, ev = act(t, "a", choose(target="b"))
    assert kinds(ev) == ["played", "swapped"]
    assert hand(u, "a") == ["b-1", "b-2"]
    assert hand(u, "b") == ["r-1", "g-2"]
    assert u.pending is None
    assert u.players[u.turn] == "b"


def test_seven_swap_cannot_target_oneself():
    s = build({"a": ["r-7", "r-1"], "b": ["b-1"], "c": ["y-1"]}, top="r-3")
    refused(s, "a", play("r-7", target="a"), "bad_target")


def test_seven_target_must_be_an_active_player():
    s = build({"a": ["r-7", "r-1"], "b": ["b-1"], "c": [], "d": ["g-1"]}, top="r-3",
              eliminated=["c"], set_aside=["y-1"] * 25)
    refused(s, "a", play("r-7", target="c"), "bad_target")
    refused(s, "a", play("r-7", target="zed"), "bad_target")
    t, _ = act(s, "a", play("r-7"))
    assert sorted(view_for(t, "a")["game"]["legal"]["choose"]) == ["b", "d"]
    refused(t, "a", choose(target="c"), "bad_target")
    refused(t, "a", choose(target="zed"), "bad_target")


def test_seven_may_swap_with_oneself_keeps_the_hand():
    s = build({"a": ["r-7", "r-1", "g-2"], "b": ["b-1"], "c": ["y-1"]}, top="r-3",
              rules={"seven": "may_swap"})
    t, ev = act(s, "a", play("r-7", target="a"))
    assert hand(t, "a") == ["r-1", "g-2"]
    assert hand(t, "b") == ["b-1"] and hand(t, "c") == ["y-1"]
    assert kinds(ev) == ["played"]
    assert t.players[t.turn] == "b"
    # the pause lists oneself as a choice, and choosing oneself keeps the hand too
    p, _ = act(s, "a", play("r-7"))
    assert sorted(view_for(p, "a")["game"]["legal"]["choose"]) == ["a", "b", "c"]
    u, ev = act(p, "a", choose(target="a"))
    assert hand(u, "a") == ["r-1", "g-2"] and kinds(ev) == ["played"]


def test_seven_may_swap_with_another_player_swaps():
    s = build({"a": ["r-7", "r-1", "g-2"], "b": ["b-1"], "c": ["y-1"]}, top="r-3",
              rules={"seven": "may_swap"})
    t, ev = act(s, "a", play("r-7", target="b"))
    assert hand(t, "a") == ["b-1"] and hand(t, "b") == ["r-1", "g-2"]
    assert kinds(ev) == ["played", "swapped"]


def test_seven_may_swap_keeping_the_hand_applies_uno_as_for_any_play():
    s = build({"a": ["r-7", "r-1"], "b": ["b-1", "b-2"], "c": ["y-1", "y-2"]}, top="r-3",
              rules={"seven": "may_swap"})
    t, ev = act(s, "a", play("r-7", target="a"))
    assert hand(t, "a") == ["r-1"]
    assert kinds(ev) == ["played", "exposed"]
    assert t.exposed == [(0, NOW + 5000)]


def test_seven_off_has_no_effect():
    s = build({"a": ["r-7", "r-1", "g-2"], "b": ["b-1"], "c": ["y-1"]}, top="r-3",
              rules={"seven": "off"})
    t, ev = act(s, "a", play("r-7"))
    assert t.pending is None
    assert kinds(ev) == ["played"]
    assert hand(t, "a") == ["r-1", "g-2"] and hand(t, "b") == ["b-1"]
    assert t.players[t.turn] == "b"
    refused(s, "a", play("r-7", target="b"), "bad_target")


def test_seven_as_last_card_wins_and_swaps_nothing():
    s = build({"a": ["r-7"], "b": ["b-1", "b-2"], "c": ["y-1"]}, top="r-3")
    t, ev = act(s, "a", play("r-7", target="b"))
    assert t.winner == 0
    assert "swapped" not in kinds(ev)
    assert hand(t, "a") == [] and hand(t, "b") == ["b-1", "b-2"]
    # without a target there is no pause either
    u, ev = act(s, "a", play("r-7"))
    assert u.pending is None and u.winner == 0
    assert kinds(ev) == ["played", "round_over"]


def test_seven_swap_resets_uno_flags_and_a_received_single_card_never_exposes():
    s = build({"a": ["r-7", "r-1", "g-2"], "b": ["b-1"], "c": ["y-1", "y-2"]}, top="r-3",
              uno=["b"])
    t, ev = act(s, "a", play("r-7", target="b"))
    assert hand(t, "a") == ["b-1"]
    assert t.uno == [False, False, False]
    assert t.exposed == []
    assert "exposed" not in kinds(ev) and "uno" not in kinds(ev)
    refused(t, "c", catch("a"), "not_exposed")
    # the new holder may still call UNO
    u, ev = act(t, "a", UNO)
    assert u.uno[0] is True and kinds(ev) == ["uno"]


def test_seven_played_down_to_one_card_gives_the_single_card_away_unexposed():
    s = build({"a": ["r-7", "r-1"], "b": ["b-1", "b-2"], "c": ["y-1", "y-2", "y-3"]}, top="r-3")
    t, ev = act(s, "a", play("r-7", target="c"))
    assert hand(t, "c") == ["r-1"]
    assert hand(t, "a") == ["y-1", "y-2", "y-3"]
    assert t.exposed == [] and "exposed" not in kinds(ev)
    assert t.uno == [False, False, False]
    refused(t, "b", catch("c"), "not_exposed")


def test_target_on_a_card_that_is_not_a_swapping_seven_is_refused():
    s = build({"a": ["r-5", "r-7", "r-1"], "b": ["b-1"], "c": ["y-1"]}, top="r-3")
    refused(s, "a", play("r-5", target="b"), "bad_target")


# -- 0 ------------------------------------------------------------------------------------------

def test_zero_passes_every_hand_one_seat_clockwise():
    s = build({"a": ["r-0", "r-1", "r-2"], "b": ["b-1", "b-2"], "c": ["g-1", "g-2", "g-3", "g-4"]},
              top="r-3")
    t, ev = act(s, "a", play("r-0"))
    assert hand(t, "b") == ["r-1", "r-2"]
    assert hand(t, "c") == ["b-1", "b-2"]
    assert hand(t, "a") == ["g-1", "g-2", "g-3", "g-4"]
    assert kinds(ev) == ["played", "passed_hands"]
    assert t.players[t.turn] == "b"
    assert t.discard[-1] == "r-0" and t.color == "r"
    conserved(s, t)


def test_zero_passes_hands_counter_clockwise_when_reversed():
    s = build({"a": ["r-0", "r-1", "r-2"], "b": ["b-1", "b-2"], "c": ["g-1", "g-2", "g-3", "g-4"]},
              top="r-3", direction=-1)
    t, ev = act(s, "a", play("r-0"))
    assert hand(t, "c") == ["r-1", "r-2"]
    assert hand(t, "b") == ["g-1", "g-2", "g-3", "g-4"]
    assert hand(t, "a") == ["b-1", "b-2"]
    assert kinds(ev) == ["played", "passed_hands"]
    assert t.players[t.turn] == "c"


def test_zero_passes_over_eliminated_seats_both_directions():
    hands = {"a": ["r-0", "r-1", "r-2"], "b": ["b-1", "b-2"], "c": [], "d": ["g-1", "g-2", "g-3"]}
    s = build(hands, top="r-3", eliminated=["c"], set_aside=["y-5"] * 25)
    t, _ = act(s, "a", play("r-0"))
    assert hand(t, "b") == ["r-1", "r-2"]
    assert hand(t, "d") == ["b-1", "b-2"]
    assert hand(t, "a") == ["g-1", "g-2", "g-3"]
    assert hand(t, "c") == [] and t.set_aside == s.set_aside
    r = build(hands, top="r-3", eliminated=["c"], set_aside=["y-5"] * 25, direction=-1)
    t, _ = act(r, "a", play("r-0"))
    assert hand(t, "d") == ["r-1", "r-2"]
    assert hand(t, "b") == ["g-1", "g-2", "g-3"]
    assert hand(t, "a") == ["b-1", "b-2"]
    assert hand(t, "c") == []
    assert t.players[t.turn] == "d"


def test_zero_off_passes_nothing():
    s = build({"a": ["r-0", "r-1"], "b": ["b-1", "b-2"], "c": ["g-1"]}, top="r-3",
              rules={"zero": "off"})
    t, ev = act(s, "a", play("r-0", uno=True))
    assert kinds(ev) == ["played", "uno"]
    assert hand(t, "a") == ["r-1"] and hand(t, "b") == ["b-1", "b-2"] and hand(t, "c") == ["g-1"]
    assert t.players[t.turn] == "b"


def test_zero_as_last_card_wins_with_no_pass():
    s = build({"a": ["r-0"], "b": ["b-1", "b-2"], "c": ["g-1"]}, top="r-3")
    t, ev = act(s, "a", play("r-0"))
    assert t.winner == 0
    assert "passed_hands" not in kinds(ev)
    assert hand(t, "b") == ["b-1", "b-2"] and hand(t, "c") == ["g-1"] and hand(t, "a") == []


def test_zero_resets_uno_flags_and_a_received_single_card_never_exposes():
    s = build({"a": ["r-0", "r-5", "r-6"], "b": ["b-1"], "c": ["g-1", "g-2"]}, top="r-3", uno=["b"])
    t, ev = act(s, "a", play("r-0"))
    assert hand(t, "c") == ["b-1"]
    assert hand(t, "b") == ["r-5", "r-6"]
    assert t.uno == [False, False, False]
    assert t.exposed == [] and "exposed" not in kinds(ev)
    refused(t, "a", catch("c"), "not_exposed")


# -- Wild Color Roulette ------------------------------------------------------------------------

def roulette_table(**kw):
    # the draw pile is bottom-first: r-8 is revealed first, then b-2, w-draw6, g-5, y-9
    return build({"a": ["w-roulette", "r-1", "r-2"], "b": ["b-1"], "c": ["g-1", "g-2"]}, top="r-3",
                 draw=["y-9", "g-5", "w-draw6", "b-2", "r-8"], **kw)


def test_roulette_target_names_the_colour_and_receives_until_a_match():
    s = roulette_table()
    t, ev = act(s, "a", play("w-roulette"))
    assert kinds(ev) == ["played"]
    assert t.discard[-1] == "w-roulette"
    assert hand(t, "a") == ["r-1", "r-2"]
    assert t.pending.choice.value == "roulette_color"
    assert t.pending.player == 1
    assert t.players[t.turn] == "b"
    assert view_for(t, "c")["game"]["pending"] == {"player": "b", "choice": "roulette_color"}
    assert [a.color for a in _legal_choices(t, "b")] == ["red", "yellow", "green", "blue"]
    u, ev = act(t, "b", choose(color="green"))
    revealed = ["r-8", "b-2", "w-draw6", "g-5"]  # the wild does not count; the match is kept
    assert kinds(ev) == ["roulette"]
    assert event(ev, "roulette") == {"kind": "roulette", "player": "b", "by": "a", "color": "green",
                                     "cards": revealed}
    assert hand(u, "b") == ["b-1", *revealed]
    assert u.draw_pile == ["y-9"]
    assert u.color == "g"
    assert u.pending is None
    assert u.players[u.turn] == "c"  # the target lost the turn
    conserved(s, u)


def _legal_choices(s, player):
    from engine import legal_actions

    return [a for a in legal_actions(s, player) if a.kind.value == "choose"]


def test_roulette_revealed_cards_are_public():
    s = roulette_table()
    t, _ = act(s, "a", play("w-roulette"))
    tr = apply(t, "b", choose(color="green"), NOW)
    for viewer in ("a", "b", "c", None):
        [wire] = [e.to_wire(viewer) for e in tr.events if e.kind.value == "roulette"]
        assert wire["cards"] == ["r-8", "b-2", "w-draw6", "g-5"]


def test_roulette_named_colour_at_once_becomes_current_and_play_goes_on():
    s = roulette_table()
    t, _ = act(s, "a", play("w-roulette"))
    u, ev = act(t, "b", choose(color="red"))
    assert event(ev, "roulette")["cards"] == ["r-8"]
    assert hand(u, "b") == ["b-1", "r-8"]
    assert u.color == "r"
    assert u.players[u.turn] == "c"
    # c plays on the named colour
    refused(u, "c", play("g-1"), "illegal_card")


def test_roulette_colour_choice_errors_and_cancel_not_allowed():
    s = roulette_table()
    t, _ = act(s, "a", play("w-roulette"))
    refused(t, "b", CANCEL, "cancel_not_allowed")
    refused(t, "b", choose(color="purple"), "bad_color")
    refused(t, "b", choose(target="c"), "bad_color")
    refused(t, "b", choose(), "bad_color")
    refused(t, "b", play("b-1"), "choice_pending")
    refused(t, "b", DRAW, "choice_pending")
    refused(t, "a", choose(color="red"), "no_choice_pending")
    refused(t, "a", CANCEL, "no_choice_pending")
    refused(t, "a", play("r-1"), "not_your_turn")
    refused(t, "c", play("g-1"), "not_your_turn")


def test_roulette_colour_in_the_play_is_refused_when_the_target_names_it():
    s = roulette_table()
    refused(s, "a", play("w-roulette", color="red"), "bad_color")


def test_roulette_chooser_player_names_the_colour_in_the_play():
    s = roulette_table(rules={"roulette_chooser": "player"})
    t, ev = act(s, "a", play("w-roulette", color="green"))
    assert kinds(ev) == ["played", "color", "roulette"]
    assert event(ev, "color") == {"kind": "color", "player": "a", "color": "green"}
    assert event(ev, "roulette") == {"kind": "roulette", "player": "b", "by": "a", "color": "green",
                                     "cards": ["r-8", "b-2", "w-draw6", "g-5"]}
    assert hand(t, "b") == ["b-1", "r-8", "b-2", "w-draw6", "g-5"]
    assert t.color == "g"
    assert t.pending is None
    assert t.players[t.turn] == "c"


def test_roulette_chooser_player_pauses_on_colour_and_may_cancel():
    s = roulette_table(rules={"roulette_chooser": "player"})
    t, ev = act(s, "a", play("w-roulette"))
    assert ev == []
    assert t.pending.choice.value == "color" and t.pending.player == 0
    assert hand(t, "a") == ["w-roulette", "r-1", "r-2"]
    c, ev = act(t, "a", CANCEL)
    assert c.pending is None and kinds(ev) == ["cancelled"]
    assert hand(c, "a") == ["w-roulette", "r-1", "r-2"]
    u, ev = act(t, "a", choose(color="blue"))
    assert event(ev, "roulette")["cards"] == ["r-8", "b-2"]
    assert hand(u, "b") == ["b-1", "r-8", "b-2"]
    assert u.color == "b"
    assert u.players[u.turn] == "c"


def test_roulette_with_two_players_comes_back_to_its_player():
    s = build({"a": ["w-roulette", "r-1"], "b": ["b-1"]}, top="r-3", draw=["g-5", "y-2"])
    t, _ = act(s, "a", play("w-roulette", uno=True))
    u, _ = act(t, "b", choose(color="yellow"))
    assert hand(u, "b") == ["b-1", "y-2"]
    assert u.players[u.turn] == "a"
    assert u.color == "y"


def test_roulette_reshuffles_then_ends_without_a_match_when_the_deck_runs_out():
    s = build({"a": ["w-roulette", "r-1", "r-2"], "b": ["b-1"], "c": ["g-1", "g-2"]}, top="r-3",
              discard=["g-5", "b-6"], draw=["g-7"])
    t, _ = act(s, "a", play("w-roulette"))
    u, ev = act(t, "b", choose(color="yellow"))
    assert kinds(ev) == ["reshuffled", "roulette"]
    assert event(ev, "reshuffled")["count"] == 3
    cards = event(ev, "roulette")["cards"]
    assert cards[0] == "g-7"
    assert Counter(cards) == Counter(["g-7", "g-5", "b-6", "r-3"])
    assert Counter(hand(u, "b")) == Counter(["b-1", "g-7", "g-5", "b-6", "r-3"])
    assert u.draw_pile == [] and u.discard == ["w-roulette"]
    assert u.color == "y"
    assert u.players[u.turn] == "c"
    assert u.winner is None
    conserved(s, u)


def test_roulette_mercy_eliminates_the_target_and_stops():
    s = build({"a": ["w-roulette", "r-1", "r-2"], "b": ["b-1"] * 23, "c": ["g-1", "g-2"]}, top="r-3",
              draw=["y-4", "g-5", "r-7", "r-8"])
    t, _ = act(s, "a", play("w-roulette"))
    u, ev = act(t, "b", choose(color="green"))
    assert kinds(ev) == ["roulette", "eliminated"]
    assert event(ev, "roulette")["cards"] == ["r-8", "r-7"]
    assert event(ev, "eliminated")["player"] == "b"
    assert u.eliminated == [False, True, False]
    assert hand(u, "b") == []
    assert Counter(u.set_aside) == Counter(["b-1"] * 23 + ["r-8", "r-7"])
    assert u.draw_pile == ["y-4", "g-5"]  # the roulette stopped there
    assert u.players[u.turn] == "c"
    assert u.pending is None
    conserved(s, u)


def test_roulette_cannot_be_played_on_a_stack():
    s = build({"a": ["w-roulette", "r-1"], "b": ["b-1"]}, top="r-draw2", stack=(2, 2))
    refused(s, "a", play("w-roulette"), "stack_pending")


# -- wild colour choice, choose and cancel --------------------------------------------------------

def wild_table(**kw):
    return build({"a": ["w-draw6", "r-1", "g-2"], "b": ["b-1", "b-2"], "c": ["y-1", "y-2"]}, top="r-3",
                 draw=["g-9"] * 8, **kw)


def test_wild_without_colour_pauses_and_nothing_else_changes():
    s = wild_table()
    t, ev = act(s, "a", play("w-draw6"))
    assert ev == []
    assert t.pending.choice.value == "color" and t.pending.player == 0 and t.pending.card == "w-draw6"
    before, after = s.to_dict(), t.to_dict()
    for key in ("hands", "draw_pile", "discard", "color", "turn", "stack_total", "stack_last",
                "direction", "exposed", "uno"):
        assert after[key] == before[key], key
    assert view_for(t, "a")["game"]["pending"] == {"player": "a", "choice": "color", "card": "w-draw6"}
    assert view_for(t, "b")["game"]["pending"] == {"player": "a", "choice": "color"}
    assert view_for(t, None)["game"]["pending"] == {"player": "a", "choice": "color"}


def test_wild_colour_choose_plays_the_card():
    s = wild_table()
    t, _ = act(s, "a", play("w-draw6"))
    u, ev = act(t, "a", choose(color="green"))
    assert kinds(ev) == ["played", "color"]
    assert event(ev, "color") == {"kind": "color", "player": "a", "color": "green"}
    assert u.color == "g"
    assert u.discard[-1] == "w-draw6"
    assert hand(u, "a") == ["r-1", "g-2"]
    assert (u.stack_total, u.stack_last) == (6, 6)
    assert u.players[u.turn] == "b"
    assert u.pending is None


def test_wild_colour_given_in_the_play_does_not_pause():
    s = wild_table()
    t, ev = act(s, "a", play("w-draw6", color="blue"))
    assert t.pending is None
    assert kinds(ev) == ["played", "color"]
    assert t.color == "b"


def test_cancel_returns_the_card_and_the_turn_goes_on():
    s = wild_table()
    t, _ = act(s, "a", play("w-draw6"))
    c, ev = act(t, "a", CANCEL)
    assert kinds(ev) == ["cancelled"]
    assert event(ev, "cancelled")["player"] == "a"
    assert c.pending is None
    assert hand(c, "a") == ["w-draw6", "r-1", "g-2"]
    assert c.discard == s.discard and c.color == s.color
    assert c.players[c.turn] == "a"
    u, ev = act(c, "a", play("r-1"))
    assert kinds(ev) == ["played"]
    assert u.players[u.turn] == "b"


def test_cancel_of_a_seven_target_choice():
    s = build({"a": ["r-7", "r-1"], "b": ["b-1"], "c": ["y-1"]}, top="r-3")
    t, _ = act(s, "a", play("r-7"))
    c, ev = act(t, "a", CANCEL)
    assert kinds(ev) == ["cancelled"] and c.pending is None
    assert hand(c, "a") == ["r-7", "r-1"] and c.players[c.turn] == "a"


def test_uno_on_a_play_is_remembered_across_the_pause():
    s = build({"a": ["w-draw6", "r-1"], "b": ["b-1", "b-2"]}, top="r-3")
    t, _ = act(s, "a", play("w-draw6", uno=True))
    u, ev = act(t, "a", choose(color="red"))
    assert kinds(ev) == ["played", "color", "uno"]
    assert u.uno[0] is True and u.exposed == []


def test_only_the_chooser_acts_while_a_choice_pauses_but_catch_and_uno_stay_open():
    s = build({"a": ["w-draw6", "r-1", "g-2"], "b": ["b-1", "b-2"], "c": ["y-1"], "d": ["g-7"]},
              top="r-3", draw=["g-9"] * 4, exposed={"c": NOW + 5000})
    t, _ = act(s, "a", play("w-draw6"))
    refused(t, "a", play("r-1"), "choice_pending")
    refused(t, "a", DRAW, "choice_pending")
    refused(t, "a", PASS, "choice_pending")
    refused(t, "b", play("b-1"), "not_your_turn")
    refused(t, "b", DRAW, "not_your_turn")
    refused(t, "b", choose(color="red"), "no_choice_pending")
    refused(t, "b", CANCEL, "no_choice_pending")
    u, ev = act(t, "b", catch("c"))
    assert kinds(ev) == ["caught"]
    assert hand(u, "c") == ["y-1", "g-9", "g-9"]
    assert u.pending == t.pending
    v, ev = act(t, "d", UNO)
    assert kinds(ev) == ["uno"] and v.pending == t.pending


def test_wild_as_last_card_needs_no_colour_and_never_pauses():
    s = build({"a": ["w-draw10"], "b": ["b-1", "b-2"]}, top="r-3")
    t, ev = act(s, "a", play("w-draw10"))
    assert t.pending is None and t.winner == 0
    assert kinds(ev) == ["played", "round_over"]
    assert hand(t, "b") == ["b-1", "b-2"]


# -- choice errors --------------------------------------------------------------------------------

def test_bad_color_errors():
    s = wild_table()
    refused(s, "a", play("w-draw6", color="purple"), "bad_color")
    refused(s, "a", play("w-draw6", color="r"), "bad_color")
    refused(s, "a", play("r-1", color="red"), "bad_color")  # colour on a coloured card
    t, _ = act(s, "a", play("w-draw6"))
    refused(t, "a", choose(color="purple"), "bad_color")
    refused(t, "a", choose(target="b"), "bad_color")
    refused(t, "a", choose(), "bad_color")


def test_bad_target_errors():
    s = build({"a": ["r-7", "r-1", "w-draw6"], "b": ["b-1"], "c": ["y-1"]}, top="r-3")
    refused(s, "a", play("r-7", target="nobody"), "bad_target")
    refused(s, "a", play("r-1", target="b"), "bad_target")
    refused(s, "a", play("w-draw6", color="red", target="b"), "bad_target")
    t, _ = act(s, "a", play("r-7"))
    refused(t, "a", choose(target="nobody"), "bad_target")
    refused(t, "a", choose(top="r-7"), "bad_target")


def test_bad_top_errors_outside_discard_all_choose():
    s = build({"a": ["r-7", "r-1", "w-draw6"], "b": ["b-1"], "c": ["y-1"]}, top="r-3",
              rules={"discard_all_top": "choose"})
    refused(s, "a", play("r-1", top="r-1"), "bad_top")
    refused(s, "a", play("w-draw6", color="red", top="w-draw6"), "bad_top")


def test_no_choice_pending_errors():
    s = wild_table()
    refused(s, "a", choose(color="red"), "no_choice_pending")
    refused(s, "a", CANCEL, "no_choice_pending")
    refused(s, "b", choose(color="red"), "no_choice_pending")


def test_choice_pending_errors():
    s = wild_table()
    t, _ = act(s, "a", play("w-draw6"))
    refused(t, "a", play("w-draw6", color="red"), "choice_pending")
    refused(t, "a", play("g-2"), "choice_pending")
    refused(t, "a", DRAW, "choice_pending")


def test_pending_choice_built_directly_is_answered_by_choose():
    s = pending(build({"a": ["w-draw6", "r-1", "r-2"], "b": ["b-1", "b-2"], "c": ["y-1"]}, top="r-3"),
                "a", "color", "w-draw6")
    t, ev = act(s, "a", choose(color="yellow"))
    assert kinds(ev) == ["played", "color"]
    assert t.color == "y" and (t.stack_total, t.stack_last) == (6, 6)


def test_discard_all_discards_its_own_colour_not_the_current_colour():
    s = build({"a": ["y-discard", "r-1", "y-5", "r-2"], "b": ["b-1"], "c": ["g-1"]}, top="r-discard")
    t, ev = act(s, "a", play("y-discard"))
    assert event(ev, "discarded")["cards"] == ["y-5"]
    assert hand(t, "a") == ["r-1", "r-2"]
    assert t.discard == ["r-discard", "y-5", "y-discard"]
    assert t.color == "y"


def test_seven_swap_closes_the_targets_window_and_never_exposes_the_receiver():
    s = build({"a": ["r-7", "r-1", "g-2"], "b": ["b-1"], "c": ["y-1", "y-2"]}, top="r-3",
              exposed={"b": NOW + 5000})
    t, ev = act(s, "a", play("r-7", target="b"))
    assert hand(t, "a") == ["b-1"] and hand(t, "b") == ["r-1", "g-2"]
    assert t.exposed == [] and "exposed" not in kinds(ev)
    refused(t, "c", catch("a"), "not_exposed")
    refused(t, "c", catch("b"), "not_exposed")


def test_roulette_targets_the_next_active_player_in_the_current_direction():
    hands = {"a": ["w-roulette", "r-1", "r-2"], "b": [], "c": ["g-1"], "d": ["y-1"]}
    s = build(hands, top="r-3", eliminated=["b"], set_aside=["b-5"] * 25, draw=["r-9"])
    t, _ = act(s, "a", play("w-roulette"))
    assert t.pending.player == 2 and t.players[t.turn] == "c"
    r = build(hands, top="r-3", eliminated=["b"], set_aside=["b-5"] * 25, draw=["r-9"], direction=-1)
    t, _ = act(r, "a", play("w-roulette"))
    assert t.pending.player == 3 and t.players[t.turn] == "d"
    u, ev = act(t, "d", choose(color="red"))
    assert event(ev, "roulette")["player"] == "d"
    assert hand(u, "d") == ["y-1", "r-9"]
    assert u.players[u.turn] == "c"  # d lost the turn; b is passed over


def test_a_chosen_wild_colour_is_the_colour_to_match():
    s = build({"a": ["w-wild", "r-1", "g-2"], "b": ["b-1", "r-5", "b-2"], "c": ["y-1"]}, top="r-3")
    t, _ = act(s, "a", play("w-wild"))
    assert t.pending.choice.value == "color"
    u, ev = act(t, "a", choose(color="blue"))
    assert kinds(ev) == ["played", "color"]
    assert u.color == "b" and u.discard[-1] == "w-wild"
    assert u.players[u.turn] == "b"
    refused(u, "b", play("r-5"), "illegal_card")
    v, _ = act(u, "b", play("b-1"))
    assert v.discard[-1] == "b-1"
