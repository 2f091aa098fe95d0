"""app.rooms.diff: the RFC 6902 patch between two views turns the old one into the new one."""

from __future__ import annotations

import random

import jsonpatch
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from app.rooms.diff import diff, diff_view, patch_json
from engine.game import apply, new_game
from engine.legal import legal_actions
from engine.rules import make_rules
from engine.view import OWN_GAME_KEYS, table_views, view_for, views_for

# Views have a schema: the value at one path keeps its JSON type from view to view (the
# differ's precondition), so the generated documents give each key one type.
_key_types = {
    "flag": st.none() | st.booleans(),
    "n": st.none() | st.integers(-3, 3),
    "s": st.none() | st.sampled_from(["r-1", "w-draw6", "", "p/1", "~"]),
}


def _documents():
    return st.recursive(
        st.fixed_dictionaries({}, optional=_key_types),
        lambda inner: st.fixed_dictionaries({}, optional={
            **_key_types,
            "cards": st.lists(st.sampled_from(["r-1", "g-2", "w-wild"]), max_size=6),
            "players": st.lists(inner, max_size=4),
            "game": inner,
            "a/b~": inner,
        }),
        max_leaves=12)


def _json(value):
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


@settings(max_examples=500, deadline=None)
@given(_documents(), _documents())
def test_the_patch_turns_old_into_new(old, new):
    ops = diff(old, new)
    assert _json(jsonpatch.apply_patch(old, ops)) == _json(new)  # JSON types compared too
    if _json(old) == _json(new):
        assert ops == []


def test_a_value_that_changes_type_is_replaced():
    assert diff(True, 1) == [{"op": "replace", "path": "", "value": 1}]
    assert diff({"a": None}, {"a": 0}) == [{"op": "replace", "path": "/a", "value": 0}]


def test_keys_are_escaped():
    assert diff({}, {"a/b~": 1}) == [{"op": "add", "path": "/a~1b~0", "value": 1}]


def test_views_of_real_games_patch_exactly_and_unchanged_parts_cost_nothing():
    rules = make_rules({"turn_timer_s": 0})
    rng = random.Random(7)
    players = ("p0", "p1", "p2", "p3")
    for g in range(5):
        s = new_game(players, rules, f"diff-{g}").state
        previous = {p: view_for(s, p) for p in players}
        while s.winner is None:
            actor = s.players[s.pending.player if s.pending is not None else s.turn]
            s = apply(s, actor, rng.choice(legal_actions(s, actor)), 0).state
            for p in players:
                view = view_for(s, p)
                ops = diff(previous[p], view)
                assert jsonpatch.apply_patch(previous[p], ops) == view
                assert not any(op["path"].startswith("/players/") and op["path"].endswith("/id")
                               for op in ops)  # ids never change, so they are never sent
                previous[p] = view


@settings(max_examples=300, deadline=None)
@given(_documents(), _documents(), _documents())
def test_a_memo_shared_by_two_viewers_gives_each_their_own_exact_patch(old, new, own):
    """Two viewers' documents share everything but one key (as the views of one table do); the
    second diff reuses what the first found for the shared parts and is still exact."""
    mine_old, mine_new = {**old, "own": own}, {**new, "own": 1}
    theirs_old, theirs_new = {**old, "own": None}, {**new, "own": own}
    memo: dict = {}
    for before, after in ((mine_old, mine_new), (theirs_old, theirs_new)):
        ops = diff(before, after, memo=memo)
        assert _json(jsonpatch.apply_patch(before, ops)) == _json(after)
        assert ops == diff(before, after)


def test_a_table_of_shared_views_patches_each_seat_exactly_and_diffs_the_public_part_once():
    rules = make_rules({"turn_timer_s": 0})
    rng = random.Random(11)
    players = ("p0", "p1", "p2", "p3")
    viewers = (*players, None)
    walked = 0
    for g in range(5):
        s = new_game(players, rules, f"memo-{g}").state
        previous = views_for(s, viewers)
        while s.winner is None:
            actor = s.players[s.pending.player if s.pending is not None else s.turn]
            s = apply(s, actor, rng.choice(legal_actions(s, actor)), 0).state
            views = views_for(s, viewers)
            memo: dict = {}
            for v in viewers:
                ops = diff(previous[v], views[v], memo=memo)
                assert ops == diff(previous[v], views[v])
                assert jsonpatch.apply_patch(previous[v], ops) == views[v] == view_for(s, v)
            # the shared players list was diffed once for the whole table
            assert [k[2:] for k in memo].count(("", "players")) == 1
            walked += 1
            previous = views
    assert walked > 100


_OWN_PATHS = tuple(f"/game/{key}" for key in OWN_GAME_KEYS)


def _table(s, viewers, now):
    """A table's views as app.rooms.model.room_views builds them: a ``room`` part shared by all."""
    public, views = table_views(s, viewers, None, now)
    room = {"code": "ABCD", "status": "playing", "round": 1 + s.moves // 40, "spectators": []}
    return public, {v: {"room": room, **view} for v, view in views.items()}


def test_diff_view_finds_the_public_changes_once_and_patches_each_viewer_exactly():
    """``diff_view`` takes every ``game`` key but the viewer's own from the public games'
    diff: each seat's, the spectator's and a seat welcomed on its own (its public game is not
    the table's) get a patch that gives exactly their new view, through whole games and from
    each game's end (``revealed``, ``points``, ``reason``) to the next deal, as a rematch."""
    rng = random.Random(5)
    players = ("p0", "p1", "p2", "p3")
    viewers = (*players, None)
    walked = removed = 0
    own_changes = dict.fromkeys(OWN_GAME_KEYS, 0)
    previous: dict | None = None
    publics: dict = {}
    for g in range(6):
        rules = make_rules({"turn_timer_s": 30, "draw": ("one", "voluntary")[g % 2]})
        s = new_game(players, rules, f"public-{g}").state
        if previous is None:
            public, previous = _table(s, viewers, 0)
            publics = dict.fromkeys(viewers, public)
            continue_from_deal = False
        else:
            continue_from_deal = True  # the previous game's last views to this deal first
        while continue_from_deal or s.winner is None:
            now = 1000 * s.moves
            if not continue_from_deal:
                actor = s.players[s.pending.player if s.pending is not None else s.turn]
                s = apply(s, actor, rng.choice(legal_actions(s, actor, now)), now).state
            continue_from_deal = False
            public, views = _table(s, viewers, now)
            memo: dict = {}
            for v in viewers:
                ops = diff_view(previous[v], views[v], memo, publics[v], public)
                assert jsonpatch.apply_patch(previous[v], ops) == views[v]
                # the fan-out's form: the same ops as JSON, the shared ones serialised once
                assert orjson.loads(patch_json(previous[v], views[v], memo, publics[v], public)) == ops
                assert views[v] == {"room": views[v]["room"], **view_for(s, v, None, now)}
                # the public parts' ops are diff's; an own key that changed is replaced whole
                public_ops = [op for op in ops if not op["path"].startswith(_OWN_PATHS)]
                assert sorted(map(repr, public_ops)) == sorted(
                    repr(op) for op in diff(previous[v], views[v]) if not op["path"].startswith(_OWN_PATHS))
                assert all(op["path"].count("/") == 2 for op in ops if op["path"].startswith(_OWN_PATHS))
                for key in OWN_GAME_KEYS:
                    own_changes[key] += any(op["path"].startswith(f"/game/{key}") for op in ops)
                removed += any(op == {"op": "remove", "path": "/game/revealed"} for op in ops)
            # the shared parts' changes (room, players, public game): found once per distinct
            # old table (the table's, and the one p2 was welcomed with), all in one memo entry
            distinct = len({id(p) for p in publics.values()})
            assert len(memo) == distinct, list(memo)
            previous, publics = views, dict.fromkeys(viewers, public)
            if s.moves % 7 == 0:  # p2 resyncs: its view and public game come from a call of its own
                publics["p2"], alone = _table(s, ["p2"], now)
                previous = {**previous, "p2": alone["p2"]}
            walked += 1
        # unknown public games: the whole views are walked (as diff does)
        assert diff_view(previous["p1"], views["p0"], {}, None, None) == diff(previous["p1"], views["p0"])
        walked_json = patch_json(previous["p1"], views["p0"], {}, None, None)
        assert orjson.loads(walked_json) == diff(previous["p1"], views["p0"])
    assert walked > 150 and min(own_changes.values()) > 20, own_changes
    assert removed == 5 * len(viewers)  # every deal after the first took the last one's reveal away
