"""Draw stacking (rules.md "Draw stacking (the ladder)", "Card effects": Wild Reverse Draw 4,
"Playing your last card"), every ``stacking`` and ``reverse4_two_players`` option value."""

from __future__ import annotations

from collections import Counter

import pytest

from engine import CARD_INFO, apply, legal_actions
from engine.actions import DRAW, PASS, Action, ActionKind, play

from .helpers import NOW, accepted, act, build, hand, kinds, pending, refuse
from .helpers import event as ev

# -- helpers -----------------------------------------------------------------------------------


def assert_legal_matches_apply(s, player):
    """What ``legal_actions`` lists for the turn is exactly what ``apply`` accepts."""
    legal = legal_actions(s, player)
    turn_actions = [a for a in legal if a.kind in (ActionKind.PLAY, ActionKind.DRAW, ActionKind.PASS)]
    for a in turn_actions:
        assert accepted(s, player, a), a
    candidates = [play(c) for c in dict.fromkeys(hand(s, player))] + [DRAW, PASS]
    for a in candidates:
        assert accepted(s, player, a) == (a in legal), a
    return legal


def seat(s, player):
    return s.players.index(player)


def plays_listed(legal):
    return sorted(a.card for a in legal if a.kind is ActionKind.PLAY)




# -- the ladder --------------------------------------------------------------------------------


def test_draw_card_starts_a_stack_aimed_at_the_next_player():
    s = build({"a": ["r-draw2", "g-5", "y-8"], "b": ["b-1", "y-2"], "c": ["g-1"]}, top="r-3",
              draw=["y-9"] * 5)
    s2, events = act(s, "a", play("r-draw2"))
    assert kinds(events) == ["played"]
    assert (s2.stack_total, s2.stack_last) == (2, 2)
    assert s2.players[s2.turn] == "b"
    assert hand(s2, "b") == ["b-1", "y-2"]  # nothing drawn yet
    assert s2.discard[-1] == "r-draw2"
    assert s2.color == "r"
    assert s2.card_count() == s.card_count()


def test_ladder_compares_with_last_value_not_total():
    s = build({"a": ["r-draw2", "g-5"], "b": ["y-draw4", "b-1"], "c": ["g-draw4", "g-draw2", "b-7"],
               "d": ["b-2"]}, top="r-3", draw=["y-9"] * 12)
    s, _ = act(s, "a", play("r-draw2"))
    s, _ = act(s, "b", play("y-draw4"))  # colour does not matter on a stack
    assert (s.stack_total, s.stack_last) == (6, 4)
    assert s.players[s.turn] == "c"
    assert s.color == "y"
    # a draw 2 is below the last value (4), even though nothing is compared with the total 6
    refuse(s, "c", play("g-draw2"), "stack_pending")
    legal = assert_legal_matches_apply(s, "c")
    assert plays_listed(legal) == ["g-draw4"]
    assert Action(ActionKind.DRAW) in legal
    assert Action(ActionKind.PASS) not in legal
    # 4 is below the total 6 but equal to the last card: it stacks
    s, events = act(s, "c", play("g-draw4"))
    assert kinds(events) == ["played"]
    assert (s.stack_total, s.stack_last) == (10, 4)
    assert s.players[s.turn] == "d"
    assert s.color == "g"


def test_colour_is_irrelevant_on_a_stack():
    # top is a red draw 2 and the current colour red; a blue draw 2 and a green draw 4 both answer
    s = build({"a": ["g-1"], "b": ["b-draw2", "g-draw4", "y-5"], "c": ["y-1"]},
              top="r-draw2", turn="b", stack=(2, 2), draw=["y-9"] * 8)
    s2, _ = act(s, "b", play("b-draw2"))
    assert (s2.stack_total, s2.stack_last, s2.color) == (4, 2, "b")
    assert s2.players[s2.turn] == "c"
    s3, _ = act(s, "b", play("g-draw4"))
    assert (s3.stack_total, s3.stack_last, s3.color) == (6, 4, "g")
    assert s3.players[s3.turn] == "c"


@pytest.mark.parametrize("card", ["r-5", "r-3", "r-skip", "r-reverse", "r-skipall", "r-discard",
                                  "w-roulette"])
def test_nothing_but_a_draw_card_escapes_a_stack(card):
    # r-5 matches the colour, r-3 the number of the card under the stack
    s = build({"a": ["g-1", "g-2"], "b": [card, "y-5", "y-6"], "c": ["y-1"]},
              top="r-draw2", discard=["r-3"], turn="b", stack=(2, 2), draw=["y-9"] * 4)
    action = play(card, color="red") if CARD_INFO[card].wild else play(card)
    refuse(s, "b", action, "stack_pending")
    if CARD_INFO[card].wild:
        refuse(s, "b", play(card), "stack_pending")
    legal = assert_legal_matches_apply(s, "b")
    assert plays_listed(legal) == []
    assert [a.kind for a in legal] == [ActionKind.DRAW]


def test_pass_is_never_legal_under_a_stack_even_with_nothing_left_to_draw():
    # piles exhausted and no card to answer with: still no pass, the stack is taken (short)
    s = build({"a": ["g-1", "g-2"], "b": ["y-5", "y-6"], "c": ["y-1", "b-4"]},
              top="r-draw2", turn="b", stack=(2, 2), draw=[])
    refuse(s, "b", PASS, "stack_pending", "pass_not_allowed")
    legal = assert_legal_matches_apply(s, "b")
    assert legal == [DRAW]
    s2, events = act(s, "b", DRAW)
    assert ev(events, "took_stack")["count"] == 0
    assert hand(s2, "b") == ["y-5", "y-6"]
    assert (s2.stack_total, s2.stack_last) == (0, 0)
    assert s2.players[s2.turn] == "c"
    assert s2.winner is None


def test_pass_refused_under_a_stack_with_cards_to_draw():
    s = build({"a": ["g-1"], "b": ["r-draw2", "y-6"], "c": ["y-1"]},
              top="r-draw2", turn="b", stack=(2, 2), draw=["g-9", "g-8"])
    refuse(s, "b", PASS, "stack_pending", "pass_not_allowed")


def test_taking_the_stack_draws_the_total_and_ends_the_turn():
    pile = ["g-9", "g-8", "b-7", "b-6", "y-5", "y-4", "r-1", "r-2"]  # last drawn first
    s = build({"a": ["r-draw2", "g-5"], "b": ["y-draw4", "b-1"], "c": ["r-3", "b-2"], "d": ["b-2"]},
              top="r-3", draw=pile)
    s, _ = act(s, "a", play("r-draw2"))
    s, _ = act(s, "b", play("y-draw4"))
    assert s.players[s.turn] == "c"
    before_pile = list(s.draw_pile)
    t = apply(s, "c", DRAW, NOW)
    s2 = t.state
    mine = [e.to_wire("c") for e in t.events]
    theirs = [e.to_wire("a") for e in t.events]
    spectator = [e.to_wire(None) for e in t.events]
    assert kinds(mine) == ["took_stack"]  # no separate `drew` for the same cards
    took = ev(mine, "took_stack")
    expected = list(reversed(before_pile))[:6]
    assert took == {"kind": "took_stack", "player": "c", "count": 6, "cards": expected}
    assert ev(theirs, "took_stack") == {"kind": "took_stack", "player": "c", "count": 6}
    assert ev(spectator, "took_stack") == {"kind": "took_stack", "player": "c", "count": 6}
    assert hand(s2, "c") == ["r-3", "b-2", *expected]
    assert s2.draw_pile == before_pile[:-6]
    assert (s2.stack_total, s2.stack_last) == (0, 0)
    assert s2.players[s2.turn] == "d"  # taking the stack ends c's turn
    # c's playable r-3 cannot be played any more: the turn is gone
    refuse(s2, "c", play("r-3"), "not_your_turn")
    # d plays on the top card normally: the stack is gone, colour yellow from the draw 4
    assert s2.discard[-1] == "y-draw4"
    assert s2.color == "y"


def test_stack_goes_to_next_active_player_past_eliminated_seats():
    s = build({"a": ["r-draw2", "g-5"], "b": [], "c": ["y-1", "y-2"]}, top="r-3",
              eliminated=["b"], draw=["g-1"] * 3)
    s2, _ = act(s, "a", play("r-draw2"))
    assert s2.players[s2.turn] == "c"
    assert s2.stack_total == 2
    s3, events = act(s2, "c", DRAW)
    assert ev(events, "took_stack")["count"] == 2
    assert s3.players[s3.turn] == "a"  # b is skipped again


def test_wild_draw_on_a_stack_chooses_the_colour_or_pauses():
    s = build({"a": ["g-1"], "b": ["w-draw6", "y-5", "y-8"], "c": ["y-1"]},
              top="r-draw4", turn="b", stack=(4, 4), draw=["g-9"] * 10)
    s2, events = act(s, "b", play("w-draw6", color="blue"))
    assert kinds(events) == ["played", "color"]
    assert ev(events, "color") == {"kind": "color", "player": "b", "color": "blue"}
    assert (s2.stack_total, s2.stack_last, s2.color) == (10, 6, "b")
    assert s2.players[s2.turn] == "c"
    # without a colour the play pauses; the card stays in hand and the stack waits
    s3, events = act(s, "b", play("w-draw6"))
    assert events == []
    assert s3.pending is not None and s3.pending.choice.value == "color"
    assert "w-draw6" in hand(s3, "b")
    assert (s3.stack_total, s3.stack_last) == (4, 4)
    s4, events = act(s3, "b", Action(ActionKind.CHOOSE, color="green"))
    assert (s4.stack_total, s4.stack_last, s4.color) == (10, 6, "g")
    assert s4.players[s4.turn] == "c"


def test_taking_a_stack_under_until_playable_even_with_a_playable_card():
    # printed draw rule: draw is normally refused with a playable card, but under a stack it takes it
    s = build({"a": ["g-1"], "b": ["r-7", "r-5"], "c": ["y-1"]}, top="r-draw2", turn="b",
              stack=(2, 2), draw=["g-9", "g-8", "g-7"], rules={"preset": "printed"})
    refuse(s, "b", play("r-5"), "stack_pending")
    s2, events = act(s, "b", DRAW)
    assert kinds(events) == ["took_stack"]
    assert hand(s2, "b") == ["r-7", "r-5", "g-7", "g-8"]
    assert s2.players[s2.turn] == "c"
    assert s2.drawn is None


# -- stacking options ---------------------------------------------------------------------------

# (stacking, last card on the stack, answer, accepted)
STACK_TABLE = [
    # ladder: value >= last value
    ("ladder", "r-draw2", "b-draw2", True),
    ("ladder", "r-draw2", "g-draw4", True),
    ("ladder", "r-draw2", "w-reverse4", True),
    ("ladder", "r-draw2", "w-draw10", True),
    ("ladder", "y-draw4", "r-draw2", False),
    ("ladder", "y-draw4", "w-reverse4", True),
    ("ladder", "w-reverse4", "b-draw4", True),
    ("ladder", "w-draw6", "y-draw4", False),
    ("ladder", "w-draw6", "w-reverse4", False),
    ("ladder", "w-draw6", "w-draw6", True),
    ("ladder", "w-draw10", "w-draw6", False),
    ("ladder", "w-draw10", "w-draw10", True),
    # wild_any: wild draw cards on any draw card, coloured ones follow the ladder
    ("wild_any", "w-draw10", "w-draw6", True),
    ("wild_any", "w-draw10", "w-reverse4", True),
    ("wild_any", "w-draw6", "w-reverse4", True),
    ("wild_any", "w-draw10", "r-draw4", False),
    ("wild_any", "y-draw4", "r-draw2", False),
    ("wild_any", "w-draw6", "g-draw4", False),
    ("wild_any", "r-draw2", "g-draw4", True),
    ("wild_any", "y-draw4", "b-draw4", True),
    # any: any draw card on any draw card
    ("any", "w-draw10", "r-draw2", True),
    ("any", "w-draw6", "g-draw4", True),
    ("any", "w-draw10", "w-reverse4", True),
    ("any", "y-draw4", "b-draw2", True),
    ("any", "r-draw2", "w-draw10", True),
]


@pytest.mark.parametrize(("stacking", "last", "answer", "ok"), STACK_TABLE)
def test_stack_answers_by_option(stacking, last, answer, ok):
    last_value = CARD_INFO[last].draw
    s = build({"a": ["g-1", "g-2"], "b": [answer, "y-5", "y-6"], "c": ["y-1", "y-2"], "d": ["b-1"]},
              top=last, color="red" if CARD_INFO[last].wild else None, turn="b",
              stack=(last_value + 2, last_value), draw=["g-9"] * 30, rules={"stacking": stacking})
    action = play(answer, color="blue") if CARD_INFO[answer].wild else play(answer)
    legal = assert_legal_matches_apply(s, "b")
    assert (play(answer) in legal) == ok
    if not ok:
        refuse(s, "b", action, "stack_pending")
        return
    s2, events = act(s, "b", action)
    value = CARD_INFO[answer].draw
    assert events[0] == {"kind": "played", "player": "b", "card": answer}
    assert (s2.stack_total, s2.stack_last) == (last_value + 2 + value, value)
    assert s2.discard[-1] == answer
    assert hand(s2, "b") == ["y-5", "y-6"]
    if answer == "w-reverse4":  # 4 players: direction flips, stack to a
        assert s2.direction == -1
        assert s2.players[s2.turn] == "a"
    else:
        assert s2.direction == 1
        assert s2.players[s2.turn] == "c"


@pytest.mark.parametrize("stacking", ["ladder", "wild_any", "any"])
def test_roulette_and_normal_cards_never_stack_in_any_mode(stacking):
    s = build({"a": ["g-1"], "b": ["w-roulette", "b-draw2", "r-skip", "r-2"], "c": ["y-1"]},
              top="r-draw2", turn="b", stack=(2, 2), draw=["g-9"] * 4, rules={"stacking": stacking})
    refuse(s, "b", play("w-roulette"), "stack_pending")
    refuse(s, "b", play("r-skip"), "stack_pending")
    refuse(s, "b", play("r-2"), "stack_pending")
    legal = assert_legal_matches_apply(s, "b")
    assert plays_listed(legal) == ["b-draw2"]


@pytest.mark.parametrize(("card", "value"), [("r-draw2", 2), ("r-draw4", 4), ("w-draw6", 6),
                                             ("w-draw10", 10)])
def test_stacking_off_next_player_draws_at_once_and_is_skipped(card, value):
    pile = [f"g-{i}" for i in range(10)] + ["b-9", "b-8"]
    s = build({"a": [card, "g-5", "y-8"], "b": ["r-draw2", "y-2"], "c": ["y-1", "b-1"]}, top="r-3",
              draw=pile, rules={"stacking": "off"})
    action = play(card, color="green") if CARD_INFO[card].wild else play(card)
    t = apply(s, "a", action, NOW)
    s2 = t.state
    events = [e.to_wire("b") for e in t.events]
    ks = [k for k in kinds(events) if k != "color"]
    assert ks == ["played", "drew", "skipped"]
    expected = list(reversed(pile))[:value]
    assert ev(events, "drew") == {"kind": "drew", "player": "b", "count": value, "cards": expected}
    assert ev(events, "skipped")["players"] == ["b"]
    assert hand(s2, "b") == ["r-draw2", "y-2", *expected]
    assert (s2.stack_total, s2.stack_last) == (0, 0)
    assert s2.players[s2.turn] == "c"
    assert s2.card_count() == s.card_count()


def test_stacking_off_draw_card_on_draw_card_does_not_accumulate():
    # with stacking off nothing is aimed at b, who has already drawn; a draw 2 on a draw 2 is a
    # plain symbol match that makes the next player draw its own value only
    s = build({"a": ["r-draw2", "g-5"], "b": ["b-draw2", "y-2"], "c": ["g-draw2", "b-1"]}, top="r-3",
              draw=["g-1"] * 8, rules={"stacking": "off"})
    s, _ = act(s, "a", play("r-draw2"))
    assert len(hand(s, "b")) == 4
    assert s.players[s.turn] == "c"
    refuse(s, "b", play("b-draw2"), "not_your_turn")
    s, events = act(s, "c", play("g-draw2"))
    assert ev(events, "drew")["player"] == "a"
    assert ev(events, "drew")["count"] == 2
    assert hand(s, "a") == ["g-5", "g-1", "g-1"]
    assert (s.stack_total, s.stack_last) == (0, 0)
    assert s.players[s.turn] == "b"


def test_wrd4_three_players_flips_direction_and_aims_at_new_next():
    s = build({"a": ["w-reverse4", "g-5", "y-8"], "b": ["y-1", "y-2"], "c": ["w-draw6", "b-1"],
               "d": ["b-2", "b-3"]}, top="r-3", draw=["g-1"] * 12)
    s2, events = act(s, "a", play("w-reverse4", color="yellow"))
    assert kinds(events) == ["played", "color", "reversed"]
    assert ev(events, "reversed")["direction"] == -1
    assert s2.direction == -1
    assert s2.color == "y"
    assert (s2.stack_total, s2.stack_last) == (4, 4)
    assert s2.players[s2.turn] == "d"
    s3, _ = act(s2, "d", DRAW)
    assert len(hand(s3, "d")) == 6
    assert s3.players[s3.turn] == "c"  # play continues in the new direction


def test_wrd4_three_players_exactly_three():
    s = build({"a": ["w-reverse4", "g-5"], "b": ["y-1", "y-2"], "c": ["b-1", "b-2"]},
              top="r-3", draw=["g-1"] * 6)
    s2, _ = act(s, "a", play("w-reverse4", color="green"))
    assert s2.direction == -1
    assert s2.players[s2.turn] == "c"
    assert (s2.stack_total, s2.stack_last) == (4, 4)


def test_wrd4_on_a_stack_sends_it_back_in_the_new_direction():
    s = build({"a": ["r-draw2", "g-5"], "b": ["w-reverse4", "y-2"], "c": ["b-1"], "d": ["b-2"]},
              top="r-3", draw=["g-1"] * 10)
    s, _ = act(s, "a", play("r-draw2"))
    s, events = act(s, "b", play("w-reverse4", color="blue"))
    assert "reversed" in kinds(events)
    assert s.direction == -1
    assert (s.stack_total, s.stack_last) == (6, 4)
    assert s.players[s.turn] == "a"


def test_wrd4_two_players_self_stack_comes_back_to_the_player():
    s = build({"a": ["w-reverse4", "w-draw6", "g-5"], "b": ["y-1", "y-2"]}, top="r-3",
              draw=[f"g-{i}" for i in range(10)] + ["b-1", "b-2"])
    assert s.rules.reverse4_two_players.value == "self"
    s2, events = act(s, "a", play("w-reverse4", color="green"))
    assert "reversed" in kinds(events)
    assert s2.direction == -1
    assert (s2.stack_total, s2.stack_last) == (4, 4)
    assert s2.players[s2.turn] == "a"
    assert hand(s2, "b") == ["y-1", "y-2"]
    refuse(s2, "b", play("y-1"), "not_your_turn")
    refuse(s2, "a", play("g-5"), "stack_pending")
    refuse(s2, "a", PASS, "stack_pending", "pass_not_allowed")
    legal = assert_legal_matches_apply(s2, "a")
    assert plays_listed(legal) == ["w-draw6"]
    # a stacks on themselves and sends it on to b
    s3, _ = act(s2, "a", play("w-draw6", color="blue"))
    assert (s3.stack_total, s3.stack_last) == (10, 6)
    assert s3.players[s3.turn] == "b"
    s4, events = act(s3, "b", DRAW)
    assert ev(events, "took_stack")["count"] == 10
    assert len(hand(s4, "b")) == 12
    assert s4.players[s4.turn] == "a"


def test_wrd4_two_players_self_taking_own_stack_gives_turn_to_opponent():
    s = build({"a": ["w-reverse4", "g-5"], "b": ["y-1", "y-2"]}, top="r-3",
              draw=["b-1", "b-2", "b-3", "b-4", "b-5"])
    s2, _ = act(s, "a", play("w-reverse4", color="green"))
    s3, events = act(s2, "a", DRAW)
    assert ev(events, "took_stack") == {"kind": "took_stack", "player": "a", "count": 4,
                                        "cards": ["b-5", "b-4", "b-3", "b-2"]}
    assert hand(s3, "a") == ["g-5", "b-5", "b-4", "b-3", "b-2"]
    assert s3.players[s3.turn] == "b"
    assert (s3.stack_total, s3.stack_last) == (0, 0)


def test_wrd4_two_active_of_three_seats_counts_as_two_players():
    s = build({"a": ["w-reverse4", "g-5"], "b": [], "c": ["y-1", "y-2"]}, top="r-3",
              eliminated=["b"], draw=["g-1"] * 6)
    s2, _ = act(s, "a", play("w-reverse4", color="green"))
    assert s2.players[s2.turn] == "a"
    assert (s2.stack_total, s2.stack_last) == (4, 4)


def test_wrd4_two_players_opponent_option():
    s = build({"a": ["w-reverse4", "g-5"], "b": ["y-1", "w-draw6"]}, top="r-3",
              draw=["g-1"] * 12, rules={"reverse4_two_players": "opponent"})
    s2, events = act(s, "a", play("w-reverse4", color="green"))
    assert "reversed" in kinds(events)
    assert s2.direction == -1
    assert (s2.stack_total, s2.stack_last) == (4, 4)
    assert s2.players[s2.turn] == "b"
    refuse(s2, "a", play("g-5"), "not_your_turn")
    s3, _ = act(s2, "b", play("w-draw6", color="red"))
    assert s3.players[s3.turn] == "a"
    assert (s3.stack_total, s3.stack_last) == (10, 6)


def test_wrd4_stacking_off_two_players_self_player_draws_and_opponent_plays():
    s = build({"a": ["w-reverse4", "g-5"], "b": ["y-1", "y-2"]}, top="r-3",
              draw=["b-1", "b-2", "b-3", "b-4", "b-5"], rules={"stacking": "off"})
    s2, events = act(s, "a", play("w-reverse4", color="green"))
    assert ev(events, "drew") == {"kind": "drew", "player": "a", "count": 4,
                                  "cards": ["b-5", "b-4", "b-3", "b-2"]}
    assert hand(s2, "a") == ["g-5", "b-5", "b-4", "b-3", "b-2"]
    assert hand(s2, "b") == ["y-1", "y-2"]
    assert (s2.stack_total, s2.stack_last) == (0, 0)
    assert s2.players[s2.turn] == "b"


@pytest.mark.parametrize("called", [True, False])
def test_wrd4_on_self_from_two_cards_leaves_no_uno_and_no_exposure(called):
    """The player was down to one card for a moment, but drew 4 in the same move: the hand
    size changed, so no UNO flag, no `uno` event and no catch window (found by the property
    sweep: the flag came from the hand as it was before the draw)."""
    s = build({"a": ["w-reverse4", "g-5"], "b": ["y-1", "y-2"]}, top="r-3",
              draw=["b-1", "b-2", "b-3", "b-4", "b-5"], rules={"stacking": "off"})
    s2, events = act(s, "a", play("w-reverse4", color="green", uno=called))
    assert len(hand(s2, "a")) == 5
    assert s2.uno == [False, False] and s2.exposed == []
    assert "uno" not in kinds(events) and "exposed" not in kinds(events)


def test_wrd4_stacking_off_two_players_opponent():
    s = build({"a": ["w-reverse4", "g-5"], "b": ["y-1", "y-2"]}, top="r-3",
              draw=["b-1", "b-2", "b-3", "b-4", "b-5"],
              rules={"stacking": "off", "reverse4_two_players": "opponent"})
    s2, events = act(s, "a", play("w-reverse4", color="green"))
    assert ev(events, "drew")["player"] == "b"
    assert len(hand(s2, "b")) == 6
    assert s2.players[s2.turn] == "a"


def test_wrd4_stacking_off_four_players():
    s = build({"a": ["w-reverse4", "g-5"], "b": ["y-1"], "c": ["y-2"], "d": ["b-2"]}, top="r-3",
              draw=["b-1", "b-2", "b-3", "b-4", "b-5"], rules={"stacking": "off"})
    s2, events = act(s, "a", play("w-reverse4", color="green"))
    assert s2.direction == -1
    assert ev(events, "drew")["player"] == "d"
    assert ev(events, "skipped")["players"] == ["d"]
    assert len(hand(s2, "d")) == 5
    assert s2.players[s2.turn] == "c"


# -- last card ---------------------------------------------------------------------------------


@pytest.mark.parametrize("card", ["r-draw2", "r-draw4", "w-draw6", "w-draw10", "w-reverse4"])
def test_last_card_draw_card_wins_with_no_effect(card):
    s = build({"a": [card], "b": ["y-1", "y-2"], "c": ["b-1"]}, top="r-3", draw=["g-1"] * 12)
    s2, events = act(s, "a", play(card))  # a wild as last card needs no colour
    assert s2.pending is None
    assert s2.winner == seat(s2, "a")
    assert s2.end_reason == "out"
    assert "drew" not in kinds(events) and "took_stack" not in kinds(events)
    assert "reversed" not in kinds(events)
    assert kinds(events)[0] == "played" and kinds(events)[-1] in ("round_over", "match_over")
    assert hand(s2, "b") == ["y-1", "y-2"]
    assert (s2.stack_total, s2.stack_last) == (0, 0)
    assert s2.direction == 1
    assert s2.draw_pile == s.draw_pile
    assert ev(events, "round_over")["winner"] == "a"


@pytest.mark.parametrize("stacking", ["ladder", "off"])
def test_last_card_draw_card_on_a_stack_wins_and_nobody_draws(stacking):
    s = build({"a": ["g-1", "g-2"], "b": ["w-draw10"], "c": ["b-1"]}, top="r-draw2", turn="b",
              stack=(2, 2) if stacking == "ladder" else None, draw=["g-1"] * 12,
              rules={"stacking": stacking})
    if stacking == "off":  # a plain draw card as last card on the draw 2
        s = build({"a": ["g-1", "g-2"], "b": ["y-draw2"], "c": ["b-1"]}, top="r-draw2", turn="b",
                  draw=["g-1"] * 12, rules={"stacking": stacking})
        card = "y-draw2"
    else:
        card = "w-draw10"
    s2, events = act(s, "b", play(card))
    assert s2.winner == seat(s2, "b")
    assert "drew" not in kinds(events)
    assert hand(s2, "c") == ["b-1"]
    assert hand(s2, "a") == ["g-1", "g-2"]
    assert (s2.stack_total, s2.stack_last) == (0, 0)
    refuse(s2, "c", DRAW, "game_over")


def test_card_conservation_through_a_long_stack():
    s = build({"a": ["r-draw2", "w-draw10", "y-8"], "b": ["y-draw4", "b-1"], "c": ["w-draw6", "g-3"]},
              top="r-3", draw=[f"{c}-{n}" for c in "rygb" for n in range(8)])
    total = s.card_count()
    deck = Counter(c for h in s.hands for c in h) + Counter(s.draw_pile) + Counter(s.discard)
    s, _ = act(s, "a", play("r-draw2"))
    s, _ = act(s, "b", play("y-draw4"))
    s, _ = act(s, "c", play("w-draw6", color="red"))
    s, _ = act(s, "a", play("w-draw10", uno=True, color="blue"))
    assert (s.stack_total, s.stack_last) == (22, 10)
    s, events = act(s, "b", DRAW)
    assert ev(events, "took_stack")["count"] == 22
    assert len(hand(s, "b")) == 23
    assert s.card_count() == total
    assert Counter(c for h in s.hands for c in h) + Counter(s.draw_pile) + Counter(s.discard) == deck
    assert s.players[s.turn] == "c"


def test_pending_colour_under_stack_keeps_the_stack():
    s = pending(build({"a": ["g-1"], "b": ["w-draw10", "y-5"], "c": ["y-1"]}, top="r-draw4",
                      turn="b", stack=(4, 4), draw=["g-9"] * 12), "b", "color", "w-draw10")
    refuse(s, "b", DRAW, "choice_pending")
    refuse(s, "c", DRAW, "not_your_turn")
    s2, events = act(s, "b", Action(ActionKind.CANCEL))
    assert kinds(events) == ["cancelled"]
    assert (s2.stack_total, s2.stack_last) == (4, 4)
    assert s2.players[s2.turn] == "b"
    assert hand(s2, "b") == ["w-draw10", "y-5"]
