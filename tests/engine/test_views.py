"""engine.views_for (a whole table at once, each view equal to view_for, public parts shared)
and GameState.clone."""

from __future__ import annotations

import random

from engine import SeatInfo, apply, legal_actions, make_rules, new_game, view_for, views_for
from engine.view import OWN_GAME_KEYS, table_views


def _play(seed: int, n: int, rules_options: dict):
    rules = make_rules({"turn_timer_s": 30, **rules_options})
    players = tuple(f"p{i}" for i in range(n))
    s = new_game(players, rules, f"views-{seed}").state
    rng = random.Random(seed)
    now = 0
    yield s
    while s.winner is None:
        now += 700
        movers = [(p, a) for p in players for a in legal_actions(s, p, now)]
        player, action = rng.choice(movers)
        s = apply(s, player, action, now).state
        yield s


def test_each_view_of_a_table_equals_view_for_and_only_own_parts_differ():
    checked = pending_seen = 0
    for seed, n, options in ((1, 4, {}), (2, 2, {"seven": "may_swap"}), (3, 6, {"discard_all_top": "choose"}),
                             (4, 3, {"roulette_chooser": "target"}), (5, 10, {"draw": "one"})):
        table = {f"p{i}": SeatInfo(f"Name {i}", bot=i % 2 == 1, connected=i != 2) for i in range(n)}
        viewers = [*table, None, "someone-else"]
        for s in _play(seed, n, options):
            now = 1000 * s.moves
            views = views_for(s, viewers, table, now)
            for v in viewers:
                assert views[v] == view_for(s, v, table, now)
            first, second = views["p0"], views["p1"]
            assert first["players"] is second["players"] is views[None]["players"]
            assert views[None] is views["someone-else"]
            public, built = table_views(s, viewers, table, now)
            assert built == views and built[None]["game"] is public
            for v in viewers:  # every key but the own ones holds the public object itself
                if v in table:  # a seat's hand is the state's own list (copy-on-write)
                    assert built[v]["hand"] is s.hands[s.players.index(v)]
                game = built[v]["game"]
                assert game.keys() - set(OWN_GAME_KEYS) == public.keys() - set(OWN_GAME_KEYS)
                assert all(game[k] is public[k] for k in game if k not in OWN_GAME_KEYS)
            if s.pending is not None:
                pending_seen += 1
                chooser = s.players[s.pending.player]
                assert "card" in views[chooser]["game"]["pending"]
                assert all("card" not in views[v]["game"]["pending"] for v in viewers if v != chooser)
            checked += 1
    assert checked > 300 and pending_seen > 10


def test_clone_copies_every_field_and_shares_no_list_it_may_assign_into():
    """GameState.clone is written out field by field (for speed); it must name every field."""
    from dataclasses import fields

    from engine import GameState

    for s in _play(9, 3, {"draw": "one"}):
        twin = s.clone()
        assert twin == s and twin.to_dict() == s.to_dict()
        for f in fields(GameState):
            assert getattr(twin, f.name) is getattr(s, f.name) or f.name == "hands"
        assert twin.hands is not s.hands and twin.hands == s.hands
