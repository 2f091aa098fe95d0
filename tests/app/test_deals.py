"""A deal played again (issue #47, ``replay_deal``, app/rooms/deals.py): after a round the host
deals the next one from the finished round's seed, rules and dealer, so every seat gets the
hand it had and the same first card; the history links the two rounds."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import httpx
import pytest

from app.rooms import deals, lobby
from app.rooms.model import LOBBY, MATCH_OVER, PLAYING, ROUND_OVER, Loaded
from app.rooms.outcomes import NoChange, Refused

from .conftest import module_server
from .harness import Client, ServerProcess
from .tables import level, ok, refused, seated, started

FIVES = {"r-5": 20, "y-5": 20, "g-5": 20, "b-5": 20}  # every card plays on every other
QUICK = {"deck": FIVES, "hand_size": 3, "turn_timer_s": 0, "catch_window_s": 30}


@pytest.fixture
def server(backend: str, request: pytest.FixtureRequest, module_servers) -> ServerProcess:
    return module_server(backend, request, module_servers)


def deal_of(c: Client) -> tuple[list[str], str, str, str]:
    """What a seat sees of a deal at its start: its hand, the first card, the dealer and the
    commitment."""
    g = c.view["game"]
    return sorted(c.view["hand"]), g["top"], g["dealer"], g["deal_commitment"]


async def play_out(clients: list[Client]) -> None:
    """Whoever's turn it is plays their first card until the round is over (every card plays)."""
    by_id = {c.you: c for c in clients}
    while clients[0].view["room"]["status"] == "playing":
        mover = by_id[clients[0].view["game"]["turn"]]
        await level(clients)
        await ok(mover, {"type": "play", "card": mover.view["hand"][0]})
        await level(clients)
    assert all(c.view["room"]["status"] in ("round_over", "match_over") for c in clients)


async def test_a_replayed_deal_gives_every_seat_its_hand_and_the_same_first_card(server):
    clients = await started(server, ["Ann", "Bob", "Cat"], QUICK)
    ann = clients[0]
    first = {c.you: deal_of(c) for c in clients}
    await play_out(clients)
    await ok(ann, {"type": "replay_deal"})
    await level(clients)
    assert all(c.view["room"]["status"] == "playing" and c.view["room"]["round"] == 2 for c in clients)
    assert {c.you: deal_of(c) for c in clients} == first  # hands, top card, dealer, commitment
    again = [e for e in ann.events if e["kind"] == "started"][-1]
    assert again["round"] == 2 and again["replayed_from"] == {"match": 1, "round": 1}
    assert "deal_seed" not in again  # the seed shows only at a round's end, as ever
    # a deal played again can be played again: still the same hands
    await play_out(clients)
    await ok(ann, {"type": "replay_deal"})
    await level(clients)
    assert {c.you: deal_of(c) for c in clients} == first
    # and the next plain rematch deals new cards
    await play_out(clients)
    await ok(ann, {"type": "rematch"})
    await level(clients)
    assert ann.view["game"]["deal_commitment"] != first[ann.you][3]


async def test_replay_deal_refusals_change_nothing(server):
    clients = await started(server, ["Ann", "Bob", "Cat"], QUICK)
    ann, bob, cat = clients
    await refused(ann, {"type": "replay_deal"}, "not_over", bob, cat)  # a round in play
    await play_out(clients)
    await refused(bob, {"type": "replay_deal"}, "not_host", ann, cat)
    # a seat fewer: that deal had a hand for three
    await ok(ann, {"type": "remove_seat", "player_id": cat.you})
    await level([ann, bob])
    await refused(ann, {"type": "replay_deal"}, "deal_mismatch", bob)
    # two waiting to sit down make one too many
    for name in ("Dan", "Eve"):
        joined = server.join(ann.code, name)
        assert joined["spectator"]
    await ann.until_view(lambda v: len(v["room"]["spectators"]) == 2)
    await level([ann, bob])
    await refused(ann, {"type": "replay_deal"}, "deal_mismatch", bob)
    # in the lobby there is no finished round on the table
    await ok(ann, {"type": "lobby"})
    await level([ann, bob])
    await refused(ann, {"type": "replay_deal"}, "not_over", bob)


async def test_a_waiting_spectator_sits_in_the_free_seat_and_gets_its_hand(server):
    clients = await started(server, ["Ann", "Bob", "Cat"], QUICK)
    ann, bob, cat = clients
    cats = cards_of(cat)
    await play_out(clients)
    await ok(ann, {"type": "remove_seat", "player_id": cat.you})
    joined = server.join(ann.code, "Dan")
    dan = await Client(server, ann.code, joined["token"]).connect()
    await ann.until_view(lambda v: len(v["room"]["spectators"]) == 1)
    await level([ann, bob, dan])
    await ok(ann, {"type": "replay_deal"})
    await level([ann, bob, dan])
    assert [p["name"] for p in ann.view["players"]] == ["Ann", "Bob", "Dan"]
    assert cards_of(dan) == cats  # Cat's seat, Cat's cards


async def history(server: ServerProcess, code: str, token: str, rounds: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=server.url, headers={"authorization": f"Bearer {token}"}) as http:
        for _ in range(300):
            body = (await http.get(f"/api/rooms/{code}/history")).json()
            if sum(len(m["rounds"]) for m in body["matches"]) >= rounds:
                return body
            await asyncio.sleep(0.1)  # polling an HTTP endpoint: there is no event to wait on
    raise AssertionError("the rounds were not written")


@pytest.mark.settings(history_gather_ms=0)
async def test_the_history_links_a_replayed_round_to_its_original(server):
    clients = await started(server, ["Ann", "Bob"], QUICK)
    ann = clients[0]
    await play_out(clients)
    await ok(ann, {"type": "replay_deal"})
    await level(clients)
    await play_out(clients)
    await ok(ann, {"type": "rematch"})
    await level(clients)
    await play_out(clients)
    body = await history(server, ann.code, ann.token, 3)
    first, replayed, fresh = body["matches"][0]["rounds"]
    assert "replay_of" not in first and "replay_of" not in fresh
    assert replayed["replay_of"] == first["id"]


# -- a deal shared with another room (app/api/deals.py) ------------------------------------------

def cards_of(c: Client) -> tuple[list[str], str, str]:
    """A seat's hand, the first card and the commitment (the dealer is another room's player)."""
    hand, top, _, commitment = deal_of(c)
    return hand, top, commitment


async def use_deal(server: ServerProcess, code: str, token: str, deal: str | None) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.url, headers={"authorization": f"Bearer {token}"}) as http:
        return await http.post(f"/api/rooms/{code}/deal", json={"deal": deal})


@pytest.mark.settings(history_gather_ms=0)
async def test_another_room_plays_a_shared_deal_seat_for_seat(server):
    first = await started(server, ["Ann", "Bob", "Cat"], QUICK)
    hands = [cards_of(c) for c in first]
    await play_out(first)
    seed = first[0].view["game"]["deal_seed"]
    record = await history(server, first[0].code, first[0].token, 1)
    deal = record["matches"][0]["rounds"][0]["id"]
    async with httpx.AsyncClient(base_url=server.url) as http:
        shown = (await http.get(f"/api/deals/{deal}")).json()
        assert (await http.get("/api/deals/" + "x" * 22)).json()["error"]["code"] == "deal_not_found"
    assert shown["seats"] == 3 and shown["result"]["points"] == record["matches"][0]["rounds"][0]["points"]
    text = json.dumps(shown)
    assert seed not in text and first[0].code not in text and "Ann" not in text  # nothing of theirs
    # another room, another host: three seats, other rules until the deal sets them
    others = await seated(server, ["Dan", "Eve", "Fay"], {"hand_size": 7})
    dan, eve, _ = others
    answer = await use_deal(server, dan.code, eve.token, deal)
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "not_host"
    assert (await use_deal(server, dan.code, dan.token, "y" * 22)).status_code == 404
    assert (await use_deal(server, dan.code, dan.token, deal)).status_code == 200
    await dan.until_view(lambda v: "deal" in v["room"])
    await level(others)
    assert dan.view["room"]["deal"] == {"id": deal, "seats": 3}
    assert dan.view["room"]["rules"]["hand_size"] == 3  # the deal's rules
    await ok(dan, {"type": "start"})
    await level(others)
    assert [cards_of(c) for c in others] == hands  # seat for seat, the same cards and commitment
    assert "deal" not in dan.view["room"]
    await play_out(others)
    for c in others:  # the seed reached nobody before their round was over
        before_end = [m for m in c.messages if "deal_seed" not in json.dumps(m)]
        assert not any(seed in json.dumps(m) for m in before_end)
    mine = await history(server, dan.code, dan.token, 1)
    assert mine["matches"][0]["rounds"][0]["deal_of"] == deal
    assert mine["deals"][deal] == shown["result"]


@pytest.mark.settings(history_gather_ms=0)
async def test_a_shared_deal_needs_its_seat_count_and_the_lobby(server):
    first = await started(server, ["Ann", "Bob", "Cat"], QUICK)
    await play_out(first)
    deal = (await history(server, first[0].code, first[0].token, 1))["matches"][0]["rounds"][0]["id"]
    # the room the deal came from is not in its lobby
    answer = await use_deal(server, first[0].code, first[0].token, deal)
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "not_in_lobby"
    pair = await seated(server, ["Dan", "Eve"])
    assert (await use_deal(server, pair[0].code, pair[0].token, deal)).status_code == 200
    await pair[0].until_view(lambda v: "deal" in v["room"])
    await level(pair)
    await refused(pair[0], {"type": "start"}, "deal_mismatch", pair[1])
    # dropped: the room deals its own cards again
    assert (await use_deal(server, pair[0].code, pair[0].token, None)).status_code == 200
    await pair[0].until_view(lambda v: "deal" not in v["room"])
    await level(pair)
    assert "deal" not in pair[0].view["room"]
    await ok(pair[0], {"type": "start"})


# -- the room's side alone (app/rooms/deals.py), no server -----------------------------------------

def _finished_room(stage: str) -> tuple[Loaded, str, str]:
    """A room of a host and a bot whose first round is over (``stage``), or in play or in the lobby."""
    room, host, _ = lobby.new_room("ABCDE", "Ann", QUICK, 0)
    loaded = Loaded(room)
    lobby.add_bot(loaded, host, "easy")
    guest = lobby.join(loaded, "Bob")[0]
    if stage != LOBBY:
        lobby.start(loaded, host, 0)
        room.status = stage
    return loaded, host, guest


SHARED = {"id": "d" * 22, "seed": "5" * 32, "dealer": 1, "seats": 3, "rules": {**QUICK, "hand_size": 2}}


@pytest.mark.parametrize("stage", [LOBBY, PLAYING, ROUND_OVER, MATCH_OVER])
def test_every_refused_deal_command_changes_nothing(stage: str):
    loaded, host, guest = _finished_room(stage)
    digests = {who: seat.token_hash for who in (host, guest) for seat in loaded.room.seats if seat.id == who}
    calls = [lambda lo, w=w: deals.replay_deal(lo, w, 1000) for w in (host, guest, "p-nobody")]
    calls += [lambda lo, d=d: deals.use_deal(lo, d, SHARED) for d in (*digests.values(), "nobody")]
    calls += [lambda lo, w=w: deals.start(lo, w, 1000) for w in (host, guest)]
    refusals = 0
    for call in calls:
        trial = copy.deepcopy(loaded)
        before, game = trial.room.to_dict(), trial.game
        try:
            call(trial)
        except Refused:
            refusals += 1
            assert trial.room.to_dict() == before and trial.game is game
    assert refusals >= 5


def test_a_shared_deal_is_dealt_once_and_sets_its_rules():
    loaded, host, _ = _finished_room(LOBBY)
    digest = loaded.room.seats[0].token_hash
    events = deals.use_deal(loaded, digest, SHARED)
    assert loaded.room.rules["hand_size"] == 2 and events[0].data["deal"] == {"id": SHARED["id"], "seats": 3}
    with pytest.raises(NoChange):
        deals.use_deal(loaded, digest, SHARED)
    deals.start(loaded, host, 1000)
    assert loaded.game is not None and loaded.game.seed == SHARED["seed"] and loaded.game.dealer == 1
    assert loaded.room.deal is None and loaded.room.record["replayed_from"] == {"deal": SHARED["id"]}
