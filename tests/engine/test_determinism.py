"""Determinism: same seed + same actions = same round, a frozen RNG, and golden transcripts.

The literals below were computed once. A failure means that play changed: if the change is
intended (a rules fix, a new RNG), recompute the literal and say so in the commit; if not, an
optimisation altered behaviour.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine import (
    Action,
    GameState,
    Record,
    Step,
    apply,
    digest,
    legal_actions,
    make_rules,
    new_game,
    next_deadline,
    replay,
    view_for,
)
from engine.cards import STANDARD_DECK
from engine.rng import Rng

ROOT = Path(__file__).resolve().parents[2]


# -- same seed + same actions = same game -----------------------------------------------------

def random_round(players: tuple[str, ...], options: dict[str, Any], seed: str, policy_seed: int,
                 limit: int = 5000) -> tuple[list[GameState], list[tuple], list[Step]]:
    """A random round (out-of-turn moves and server steps included): states, events, steps."""
    rng = random.Random(policy_seed)
    s, events = new_game(players, make_rules(options), seed, now_ms=0)
    states, all_events, steps = [s], [events], []
    now = 0
    while view_for(s, None)["game"]["winner"] is None and len(steps) < limit:
        now += rng.choice((300, 900, 2500, 7000))
        dl = next_deadline(s)
        if dl is not None and dl[1] <= now:
            player, action = None, Action(dl[0])
        else:
            moves = [(p, a) for p in players for a in legal_actions(s, p, now)]
            player, action = rng.choice(moves)
        s, events = apply(s, player, action, now)
        states.append(s)
        all_events.append(events)
        steps.append(Step(player, action, now))
    return states, all_events, steps


def test_same_seed_and_actions_give_the_same_round() -> None:
    server_steps = 0
    for k, options in enumerate(({}, {"preset": "printed", "turn_timer_s": 10},
                                 {"draw": "one", "stacking": "any", "seven": "may_swap",
                                  "discard_all_top": "choose", "roulette_chooser": "player",
                                  "first_card": "apply", "catch_window_s": 1, "turn_timer_s": 10})):
        players = tuple(f"p{i}" for i in range(3 + k))
        states, events, steps = random_round(players, options, f"same-{k}", k)
        assert view_for(states[-1], None)["game"]["winner"] is not None and len(steps) > 30
        server_steps += sum(step.player is None for step in steps)
        # the same actions again, on a fresh deal from the same seed
        s, first = new_game(players, make_rules(options), f"same-{k}", now_ms=0)
        assert s == states[0] and first == events[0]
        for i, step in enumerate(steps):
            s, evs = apply(s, step.player, step.action, step.now_ms)
            assert s == states[i + 1], f"step {i} diverged"
            assert evs == events[i + 1], f"events of step {i} diverged"
            assert digest(s) == digest(states[i + 1])
        # and twice the whole random round from scratch: equal states and events throughout
        again = random_round(players, options, f"same-{k}", k)
        assert again[0] == states and again[1] == events and again[2] == steps
    assert server_steps > 5


def test_a_different_seed_gives_a_different_deal() -> None:
    rules = make_rules()
    deals = {json.dumps(new_game(["a", "b", "c"], rules, f"seed-{i}").state.hands) for i in range(20)}
    assert len(deals) == 20


def _frozen(state: GameState) -> str:
    """The state's whole content, copied: ``to_dict`` shares the state's lists, so a dict of it
    taken before a change in place would change along with the state."""
    return json.dumps(state.to_dict(), sort_keys=True)


def test_state_given_to_apply_is_left_unchanged() -> None:
    """``apply`` changes neither the state it is given nor any list that state shares with the
    states before it (copy-on-write: the server's views hold a state's own hand lists, and its
    differ takes an unchanged list for an unchanged hand)."""
    for k, options in enumerate(({"turn_timer_s": 10}, {"preset": "printed", "turn_timer_s": 10},
                                 {"draw": "one", "stacking": "any", "seven": "may_swap",
                                  "discard_all_top": "choose", "roulette_chooser": "player",
                                  "first_card": "apply", "catch_window_s": 1, "turn_timer_s": 10})):
        states, _, steps = random_round(tuple(f"p{i}" for i in range(4 + k)), options, f"untouched-{k}", k)
        frozen = [_frozen(state) for state in states]
        for state, step, before in zip(states, steps, frozen, strict=False):
            apply(state, step.player, step.action, step.now_ms)
            assert _frozen(state) == before
        # and nothing a later move did reached back into an earlier state's lists
        assert [_frozen(state) for state in states] == frozen


# -- the RNG is frozen ------------------------------------------------------------------------

def reference_words(seed: str, count: int) -> list[int]:
    """The documented algorithm, independently: block i = sha256(seed || i as 8 bytes big-endian),
    read as eight big-endian 32-bit words."""
    words: list[int] = []
    index = 0
    while len(words) < count:
        block = hashlib.sha256(seed.encode() + index.to_bytes(8, "big")).digest()
        words.extend(int.from_bytes(block[i: i + 4], "big") for i in range(0, 32, 4))
        index += 1
    return words[:count]


def test_rng_words_are_golden() -> None:
    r = Rng("golden", 0)
    words = [r.word() for _ in range(10)]
    assert words == [1174627923, 4280832072, 1386635761, 741776645, 85106045, 92143883, 1508919309,
                     131149330, 3294287544, 2363580561]
    assert r.counter == 10
    assert words == reference_words("golden", 10)
    r = Rng("", 0)
    assert [r.word() for _ in range(3)] == [2941612277, 2709588858, 4153192267]


def test_rng_counter_is_the_whole_state() -> None:
    r = Rng("golden", 5)
    assert r.word() == 92143883 and r.counter == 6
    r = Rng("ünïcode ♠", 123456)
    assert r.word() == 2867756195
    assert r.below(10) == 2
    assert r.counter == 123458
    assert reference_words("ünïcode ♠", 123458)[123456] == 2867756195


def test_rng_below_and_shuffle_are_golden() -> None:
    r = Rng("mercyless", 0)
    assert [r.below(n) for n in (1, 2, 3, 7, 52, 168, 1000, 2**31, 2**32 - 1)] == \
        [0, 0, 0, 1, 39, 56, 732, 1811973571, 2627880677]
    assert r.counter == 8  # below(1) takes no word
    r = Rng("shuffle", 0)
    items = list(range(12))
    r.shuffle(items)
    assert items == [5, 0, 2, 3, 10, 6, 8, 7, 9, 11, 1, 4]
    assert r.counter == 11


def test_shuffle_reads_the_same_words_as_below_from_any_counter() -> None:
    """``shuffle`` reads words straight from the blocks; it must be Fisher-Yates over ``below``,
    from any counter (mid-block, on a boundary, after ``word`` filled the cache)."""
    for counter in (0, 1, 7, 8, 9, 15, 16, 1001):
        for size in (0, 1, 2, 9, 168):
            fast, slow = Rng("blocks", counter), Rng("blocks", counter)
            if counter % 3 == 0:  # a cached block from an earlier word
                fast.word()
                slow.word()
            items, expected = list(range(size)), list(range(size))
            fast.shuffle(items)
            for i in range(size - 1, 0, -1):
                j = slow.below(i + 1)
                expected[i], expected[j] = expected[j], expected[i]
            assert items == expected and fast.counter == slow.counter
            assert fast.word() == slow.word()


def test_shuffle_after_a_rejected_word_goes_on_exactly_as_below(monkeypatch) -> None:
    """A rejected word is about one in ten million for a deck; a limit of 2**31 rejects about
    half the words, so the slow path after a rejection is walked often here."""
    from engine import rng as rng_module

    monkeypatch.setattr(rng_module, "limit", lambda n: 1 << 31)
    monkeypatch.setattr(rng_module, "_LIMITS", {})
    for counter in (0, 3, 8, 77):
        fast, slow = Rng("reject", counter), Rng("reject", counter)
        items, expected = list(range(40)), list(range(40))
        fast.shuffle(items)
        for i in range(39, 0, -1):
            j = slow.below(i + 1)
            expected[i], expected[j] = expected[j], expected[i]
        assert items == expected and fast.counter == slow.counter > counter + 39


def test_below_is_uniform_enough() -> None:
    r = Rng("uniform", 0)
    counts = [0] * 7
    for _ in range(7000):
        counts[r.below(7)] += 1
    assert all(850 < c < 1150 for c in counts), counts


# -- golden transcripts -----------------------------------------------------------------------

def first_legal_round(players: tuple[str, ...], options: dict[str, Any], seed: str, *,
                      timeouts: bool = False) -> tuple[GameState, Record]:
    """Play a round with the deterministic policy "the turn player takes their first legal
    action" (server steps first when due); with ``timeouts``, every turn runs out instead and
    the server plays it."""
    rules = make_rules(options)
    s, _ = new_game(players, rules, seed, now_ms=0)
    steps: list[Step] = []
    now = 0
    while view_for(s, None)["game"]["winner"] is None:
        assert len(steps) < 20_000
        now += 1000
        dl = next_deadline(s)
        if timeouts and dl is not None:
            now = max(now, dl[1])
        if dl is not None and dl[1] <= now:
            player, action = None, Action(dl[0])
        else:
            player = players[s.turn]
            action = legal_actions(s, player, now)[0]
        s = apply(s, player, action, now).state
        steps.append(Step(player, action, now))
    record = Record(players, rules.to_dict(), seed, len(players) - 1, (0,) * len(players), 0, tuple(steps))
    return s, record


MIXED = {"draw": "one", "stacking": "wild_any", "first_card": "apply", "reverse4_two_players": "opponent",
         "discard_all_top": "choose", "seven": "may_swap", "zero": "pass", "roulette_chooser": "player",
         "mercy_limit": 20, "hand_size": 9, "uno_penalty": 4, "catch_window_s": 3, "turn_timer_s": 0}

#: name -> (players, options, seed, every turn times out)
GOLDEN: dict[str, tuple[int, dict[str, Any], str, bool]] = {
    "mercyless": (4, {}, "golden-1", False),
    "printed": (3, {"preset": "printed"}, "golden-2", False),
    "mixed": (6, MIXED, "golden-3", False),
    "two_players": (2, {"stacking": "off", "reverse4_two_players": "self"}, "golden-4", False),
    "timeouts": (5, {"turn_timer_s": 10}, "golden-5", True),
}
#: name -> (actions, winner, reason, digest of the final state)
EXPECTED: dict[str, tuple[int, str, str, str]] = {
    "mercyless": (76, "p2", "last_standing", "47970be77775c762"),
    "printed": (73, "p0", "last_standing", "6cc303c74478ed1e"),
    "mixed": (144, "p4", "last_standing", "0e58ae2df2ea03ab"),
    "two_players": (21, "p1", "last_standing", "b8bc5f3064842eb8"),
    "timeouts": (116, "p1", "out", "f80ccdb3061bb127"),
}


GOLDEN_DEAL = (["r-8", "r-9", "y-1"], "b-4", 146)


def test_golden_deal() -> None:
    """The deal itself (shuffle + dealing order + first flip), readable when it changes."""
    s = new_game(("a", "b", "c"), make_rules(), "golden-deal").state
    assert (s.hands[0][:3], s.discard[-1], len(s.draw_pile)) == GOLDEN_DEAL


def golden_result(name: str) -> tuple[tuple[int, str, str, str], GameState, Record]:
    n, options, seed, timeouts = GOLDEN[name]
    players = tuple(f"p{i}" for i in range(n))
    s, record = first_legal_round(players, options, seed, timeouts=timeouts)
    game = view_for(s, None)["game"]
    return (len(record.steps), game["winner"], game["reason"], digest(s)), s, record


def test_golden_transcripts() -> None:
    for name in GOLDEN:
        result, s, record = golden_result(name)
        assert result == EXPECTED[name], f"golden transcript {name!r} changed: {result}"
        again = replay(record)
        assert again == s and digest(again) == result[3]


def test_golden_transcripts_do_not_depend_on_hash_seeds() -> None:
    """Another interpreter with other string-hash seeds plays the same transcripts."""
    code = (
        "import json, sys\n"
        "sys.path.insert(0, 'tests/engine')\n"
        "from test_determinism import GOLDEN, golden_result\n"
        "print(json.dumps({name: golden_result(name)[0] for name in GOLDEN}))\n"
    )
    for hash_seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120, check=True).stdout
        results = {name: tuple(v) for name, v in json.loads(out).items()}
        assert results == EXPECTED


def test_a_states_rules_are_written_from_one_shared_mapping_per_rules_value() -> None:
    """``GameState.to_dict`` writes its rules from ``Rules.shared_wire_form`` (found by
    identity, not by hashing the deck): the same mapping for the same rules object, equal to
    ``to_dict``; an equal rules object made apart gets an equal mapping of its own."""
    rules = make_rules({"hand_size": 5, "seven": "off"})
    twin = make_rules({"hand_size": 5, "seven": "off"})
    assert rules.shared_wire_form() is rules.shared_wire_form()
    assert rules.shared_wire_form() == rules.to_dict() == twin.shared_wire_form()
    state, _ = new_game(("a", "b", "c"), rules, "shared", now_ms=0)
    assert state.to_dict()["rules"] is rules.shared_wire_form()
    again = type(state).from_dict(json.loads(json.dumps(state.to_dict())))
    assert again.to_dict() == state.to_dict()


def test_a_rules_value_keeps_its_wire_form_through_copies_pickles_and_replace() -> None:
    """The wire form is made with the value (no cache by id): a copy, an unpickled rules object
    and one made by ``dataclasses.replace`` each carry their own, equal to their options."""
    rules = make_rules({"hand_size": 5, "seven": "off"})
    for twin in (copy.copy(rules), copy.deepcopy(rules), pickle.loads(pickle.dumps(rules))):
        assert twin == rules and hash(twin) == hash(rules)
        assert twin.shared_wire_form() == rules.shared_wire_form()
        assert twin.shared_wire_form() is twin.shared_wire_form()
    changed = dataclasses.replace(rules, seven=make_rules({"seven": "swap"}).seven)
    assert changed.shared_wire_form() == {**rules.to_dict(), "seven": "swap"}
    fresh = rules.to_dict()
    fresh["deck"]["r-1"] = 0
    assert rules.to_dict()["deck"]["r-1"] == STANDARD_DECK["r-1"]
