"""The night's story (app/history/story.py): each award's winner and value from hand-made rounds,
an empty night, and ``GET /api/rooms/{code}/story`` for members only."""

from __future__ import annotations

import httpx

from app.history.story import key_moments, night_story

from .harness import ServerProcess
from .test_history import _play_rounds_in, bearer
from .test_history_access import _error, _written

SEATS = [{"id": "p1", "name": "Ann", "bot": False}, {"id": "p2", "name": "Bob", "bot": False},
         {"id": "b1", "name": "Robo", "bot": True}]


def step(player, *events, hands=None):
    return {"player": player, "events": [{"kind": k, **d} for k, d in events],
            "hands": hands or {}}


def rnd(number, winner, steps, match_over=False, seats=SEATS, match=1, mercy=25):
    return {"match": match, "number": number, "winner": winner, "match_over": match_over,
            "mercy_limit": mercy, "seats": seats, "steps": steps}


def award(story, key):
    found = [a for a in story["awards"] if a["key"] == key]
    return found[0] if found else None


def night():
    return [
        rnd(1, "p1", [
            step("p2", ("played", {"player": "p2", "card": "R+2"}), hands={"p1": 7, "p2": 6, "b1": 7}),
            step("b1", ("played", {"player": "b1", "card": "B+4"}), hands={"p1": 7, "p2": 6, "b1": 6}),
            # Ann takes a stack of 6 and holds 13; Bob calls UNO
            step("p1", ("took_stack", {"player": "p1", "count": 6}), hands={"p1": 13, "p2": 6, "b1": 6}),
            step("p2", ("played", {"player": "p2", "card": "G5"}), ("uno", {"player": "p2"}),
                 hands={"p1": 13, "p2": 1, "b1": 6}),
            # Bob spins a roulette on the bot: 9 cards, the bot survives at 15 ...
            step("p2", ("played", {"player": "p2", "card": "W"}),
                 ("roulette", {"player": "b1", "by": "p2", "color": "red", "cards": ["G1"] * 9}),
                 hands={"p1": 13, "p2": 1, "b1": 15}),
            step("p1", ("played", {"player": "p1", "card": "R1"}), hands={"p1": 12, "p2": 1, "b1": 15}),
        ]),
        rnd(2, "b1", [
            # Ann stacks, Bob takes it and is knocked out: Ann's knock-out
            step("p1", ("played", {"player": "p1", "card": "R+4"}), hands={"p1": 6, "p2": 22, "b1": 7}),
            step("p2", ("took_stack", {"player": "p2", "count": 4}), ("eliminated", {"player": "p2"}),
                 hands={"p1": 6, "b1": 7}),
            # the bot catches Ann out, Ann holds 24 (mercy 25) and survives; the bot calls UNO
            step("b1", ("caught", {"player": "p1", "by": "b1", "count": 2}), hands={"p1": 24, "b1": 7}),
            step("b1", ("played", {"player": "b1", "card": "G2"}), ("uno", {"player": "b1"}),
                 hands={"p1": 24, "b1": 1}),
        ]),
        rnd(3, "p1", [
            # Bob draws himself out on his own turn: nobody's knock-out; the roulette knocks the bot out
            step("p2", ("drew", {"player": "p2", "count": 3}), ("eliminated", {"player": "p2"}),
                 hands={"p1": 5, "b1": 8}),
            step("p1", ("played", {"player": "p1", "card": "W"}),
                 ("roulette", {"player": "b1", "by": "p1", "color": "red", "cards": ["G1"] * 4}),
                 ("eliminated", {"player": "b1"}), hands={"p1": 4}),
            step("p1", ("uno", {"player": "p1"}), hands={"p1": 1}),
        ], match_over=True),
    ]


def test_each_award_from_the_rounds_of_a_night():
    story = night_story(night(), hue=lambda pid, name: len(name) * 10)
    assert story["rounds"] == 3 and story["matches"] == 1
    players = {p["id"]: p for p in story["players"]}
    assert [p["id"] for p in story["players"]] == ["p1", "b1", "p2"]  # matches, then rounds won
    assert (players["p1"]["rounds_won"], players["p1"]["matches_won"]) == (2, 1)
    assert (players["b1"]["rounds_won"], players["b1"]["matches_won"]) == (1, 0)
    assert players["p1"]["hue"] == 30 and players["b1"]["bot"] and not players["p1"]["bot"]
    assert story["bots_vs_people"] == {"bots": 1, "people": 2}
    assert story["last"] == {"match": 1, "round": 3}

    assert award(story, "biggest_stack") == {"key": "biggest_stack", "player": "p1", "value": 6}
    assert award(story, "biggest_roulette") == {"key": "biggest_roulette", "player": "b1", "value": 9}
    # Ann's stack knocked Bob out, Ann's roulette the bot; Bob drawing himself out is nobody's
    assert award(story, "knockouts") == {"key": "knockouts", "player": "p1", "value": 2}
    assert players["p2"]["knockouts"] == 0 and players["b1"]["knockouts"] == 0
    # Bob held 22 but was knocked out of that round; Ann held 24 and survived
    assert award(story, "closest_escape") == {"key": "closest_escape", "player": "p1", "value": 24,
                                              "mercy_limit": 25}
    # Bob called UNO in round 1, not in 2: 1; the bot in 2 only; Ann in 3 only: the first keeps it
    assert award(story, "uno_streak") == {"key": "uno_streak", "player": "p2", "value": 1}


def test_an_uno_streak_runs_over_rounds_in_a_row_and_a_round_without_breaks_it():
    uno = lambda p: step(p, ("uno", {"player": p}))  # noqa: E731
    rounds = [rnd(1, "p1", [uno("p1")]), rnd(2, "p1", [uno("p1"), uno("p2")]),
              rnd(3, "p2", [uno("p2")]), rnd(4, "p2", [uno("p2")]), rnd(5, "p1", [uno("p1")])]
    assert award(night_story(rounds), "uno_streak") == {"key": "uno_streak", "player": "p2", "value": 3}
    # a round Bob sat out does not break his streak
    two = [SEATS[0], SEATS[2]]
    rounds = [rnd(1, "p2", [uno("p2")]), rnd(2, "p1", [uno("p1")], seats=two), rnd(3, "p2", [uno("p2")])]
    assert award(night_story(rounds), "uno_streak")["value"] == 2


def test_the_key_moments_are_a_rounds_biggest_swings_in_the_order_they_happened():
    moments = key_moments(night()[1], limit=2)
    # Bob took 4 and was knocked out (29), Ann was caught for 2 (2), Ann's play (0): the first two
    assert [(m["step"], m["swing"]) for m in moments] == [(2, 29), (3, 2)]
    assert moments[0]["player"] == "p2" and moments[0]["hands"] == {"p1": 6, "b1": 7}
    assert [e["kind"] for e in moments[0]["events"]] == ["took_stack", "eliminated"]
    # the story carries the newest round's: Bob drew himself out (28), the roulette (29)
    story = night_story(night())
    assert [m["step"] for m in story["moments"]] == [1, 2]
    assert key_moments(rnd(1, "p1", [step("p1", ("played", {"player": "p1", "card": "R1"}))])) == []


def test_a_penalty_inside_someones_move_is_their_knock_out():
    rounds = [rnd(1, "p1", [step("p1", ("played", {"player": "p1", "card": "B+4"}),
                                 ("drew", {"player": "b1", "count": 4}), ("eliminated", {"player": "b1"}))])]
    assert award(night_story(rounds), "knockouts") == {"key": "knockouts", "player": "p1", "value": 1}


def test_an_empty_night_has_no_awards():
    assert night_story([]) == {"rounds": 0, "matches": 0, "players": [], "awards": [],
                               "bots_vs_people": {"bots": 0, "people": 0}, "last": None, "moments": []}
    # rounds without moves worth an award (an old record: no steps) still count their winners
    story = night_story([rnd(1, "b1", [])])
    assert story["awards"] == [] and story["bots_vs_people"] == {"bots": 1, "people": 0}


async def test_the_story_is_for_the_rooms_members_only():
    server = ServerProcess(redis="fake").start()
    try:
        host = server.create("Ann")
        code = host["code"]
        stranger = server.create("Eve")
        await _play_rounds_in(server, code, host["token"], 1, seed=5)
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            history = await _written(http, code, host["token"], 1)
            url = f"/api/rooms/{code}/story"
            _error(await http.get(url), 401, "auth_required")
            _error(await http.get(url, headers=bearer(stranger["token"])), 403, "forbidden")
            _error(await http.get("/api/rooms/ZZZZZZ/story", headers=bearer(host["token"])), 403, "forbidden")
            r = await http.get(url, headers=bearer(host["token"]))
            assert r.status_code == 200, r.text
            story = r.json()
            [played] = history["matches"][0]["rounds"]
            assert story["code"] == code and story["rounds"] == 1
            assert {p["name"] for p in story["players"]} == {s["name"] for s in played["seats"]}
            assert all(0 <= p["hue"] < 360 for p in story["players"])
            assert sum(story["bots_vs_people"].values()) == 1
            winner = next(p for p in story["players"] if p["id"] == played["winner"])
            assert winner["rounds_won"] == 1
            # the engine's replay found the moves: someone held cards without being knocked out
            escape = award(story, "closest_escape")
            assert escape is not None and 0 < escape["value"] < escape["mercy_limit"]
    finally:
        server.stop()
