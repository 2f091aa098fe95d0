"""app.rooms.lobby without a server: a round that ends at the deal moves the room on."""

from __future__ import annotations

import copy

import pytest

from app.rooms import lobby, presence
from app.rooms.model import LOBBY, MATCH_OVER, PLAYING, ROUND_OVER, Loaded, Room, Spectator
from app.rooms.outcomes import Refused
from engine import make_rules, new_game

# a first card's draw that takes the first player to the mercy limit ends a 2-seat round at once
RULES = {"first_card": "apply", "mercy_limit": 10, "hand_size": 9, "scoring": True}


def _seed_over_at_the_deal() -> str:
    rules = make_rules(RULES)
    for i in range(5000):
        seed = f"deal-{i}"
        if new_game(("a", "b"), rules, seed, dealer=1).state.winner is not None:
            return seed
    raise AssertionError("no seed ends the round at the deal")


def test_a_round_over_at_the_deal_is_round_over_and_can_be_rematched(monkeypatch: pytest.MonkeyPatch):
    room, host, _ = lobby.new_room("ABCDE", "Ann", RULES, 0)
    loaded = Loaded(room)
    lobby.join(loaded, "Bob")
    seed = _seed_over_at_the_deal()  # the deal's seed (player ids are drawn before this)
    monkeypatch.setattr(lobby.secrets, "token_hex", lambda _n: seed)
    events = lobby.start(loaded, host, 1000)
    assert loaded.game is not None and loaded.game.winner is not None
    assert room.status in ("round_over", "match_over")
    assert [e.kind.value for e in events][-1] in ("round_over", "match_over")
    assert room.scores == dict(zip(loaded.game.players, loaded.game.scores, strict=True))
    assert sum(room.scores.values()) == loaded.game.points > 0
    assert len(room.finished_rounds) == 1 and room.finished_rounds[0]["round"] == 1
    monkeypatch.undo()
    lobby.rematch(loaded, host, 2000)  # the room is not stuck in "playing"
    assert room.round == 2 and room.status in ("playing", "round_over", "match_over")


def test_back_to_the_lobby_after_the_match_then_start_begins_a_new_match():
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0)
    loaded = Loaded(room)
    bob = lobby.join(loaded, "Bob")[0]
    lobby.start(loaded, host, 1000)
    room.status, room.scores = MATCH_OVER, {host: 1200, bob: 300}  # as a round that ended the match
    events = lobby.back_to_lobby(loaded, host)
    assert [e.kind.value for e in events] == ["lobby"]
    assert room.status == "lobby" and loaded.game is None and room.scores == {host: 1200, bob: 300}
    match = room.match
    lobby.start(loaded, host, 2000)
    assert room.match == match + 1 and room.round == 1 and room.scores == {host: 0, bob: 0}


def test_back_to_the_lobby_after_a_round_then_start_deals_the_next_round_of_the_match():
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0)
    loaded = Loaded(room)
    bob = lobby.join(loaded, "Bob")[0]
    lobby.start(loaded, host, 1000)
    room.status, room.scores = ROUND_OVER, {host: 120, bob: 0}
    dealer, match = room.dealer, room.match
    lobby.back_to_lobby(loaded, host)
    cat = lobby.join(loaded, "Cat")[0]  # seated at once: the room is in the lobby
    lobby.start(loaded, host, 2000)
    assert room.match == match and room.round == 2 and room.dealer == (dealer + 1) % 3
    assert room.scores == {host: 120, bob: 0, cat: 0}


def test_a_removed_stranger_is_barred_by_name_and_address_but_the_hosts_home_stays_open():
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0, address="198.51.100.7")
    loaded = Loaded(room)
    zed = lobby.join(loaded, "Zed", address="203.0.113.50")[0]
    kid = lobby.join(loaded, "Kid", address="198.51.100.7")[0]  # at the host's home
    lobby.remove_seat(loaded, host, zed)
    lobby.remove_seat(loaded, host, kid)
    for name, address in (("zed", "192.0.2.1"), ("Other", "203.0.113.50"), ("KID", "192.0.2.2")):
        with pytest.raises(Refused) as refused:
            lobby.join(loaded, name, address=address)
        assert refused.value.code == "barred"
    lobby.join(loaded, "Mum", address="198.51.100.7")  # the host's address is not barred
    lobby.set_room(loaded, host, None, True)
    lobby.join(loaded, "Zed", address="203.0.113.50")


def test_a_barred_name_is_barred_in_look_alike_letters_and_accents_too():
    """Bug: name_key folded only case and width, so a removed player came back as "Zеd" (a
    Cyrillic e) or "Zéd" from another network."""
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0, address="198.51.100.7")
    loaded = Loaded(room)
    zed = lobby.join(loaded, "Zed", address="203.0.113.50")[0]
    lobby.remove_seat(loaded, host, zed)
    for name in ("Z\u0435d", "Zéd", "ZED", "Ｚｅｄ", "Z\u0435\u0301d"):
        with pytest.raises(Refused) as refused:
            lobby.join(loaded, name, address="192.0.2.1")
        assert refused.value.code == "barred", name
    for name in ("Zod", "Zeda", "Ned"):  # other names stay open
        lobby.join(loaded, name, address="192.0.2.1")


def test_a_newcomer_named_like_a_bot_in_look_alike_letters_is_refused_and_the_bot_keeps_its_name():
    """protocol.md "Names": bots' names are members' names too."""
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0)
    loaded = Loaded(room)
    lobby.add_bot(loaded, host, "easy")
    bot = next(seat for seat in room.seats if seat.bot)
    was = bot.name
    # Cyrillic look-alikes: every bot name (personas.NAMES; which one the room picks is random)
    # has one of these letters
    alike = was.translate(str.maketrans("aeoiscpAEOISCP", "\u0430\u0435\u043e\u0456\u0455\u0441\u0440"
                                        "\u0410\u0415\u041e\u0406\u0405\u0421\u0420"))
    assert alike != was
    before = room.to_dict()
    for name in (alike, was.upper(), f" {was.lower()} "):
        with pytest.raises(Refused) as refused:
            lobby.join(loaded, " ".join(name.split()))
        assert refused.value.code == "name_taken", name
    assert room.to_dict() == before and bot.name == was


def test_names_are_unique_in_a_room_in_case_width_accents_and_look_alike_letters():
    room, _, _ = lobby.new_room("ABCDE", "Sanne", {}, 0)
    loaded = Loaded(room)
    lobby.join(loaded, "Bob")
    lobby.join(loaded, "TV", screen=True)
    for name in ("Sanne", "sanne", "SANNE", "Sänne", "Ｓａｎｎｅ", "S\u0430nne", "bob", "B0b", "tv"):
        with pytest.raises(Refused) as refused:
            lobby.join(loaded, name)
        assert refused.value.code == "name_taken", name
    lobby.join(loaded, "Sanne B")  # another name is another name


def test_a_removed_screen_is_barred_by_its_token_not_by_the_name_or_address_screens_share():
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0, address="198.51.100.7")
    loaded = Loaded(room)
    stranger, token, _, _ = lobby.join(loaded, "TV", address="198.51.100.7", screen=True)
    lobby.remove_seat(loaded, host, stranger)
    with pytest.raises(Refused) as refused:  # back with the token it held: barred
        lobby.join(loaded, "TV", address="198.51.100.7", screen=True, screen_token=token)
    assert refused.value.code == "barred"
    # the host's own address, and the name every screen has, stay open to other screens
    other = lobby.join(loaded, "TV", address="198.51.100.7", screen=True)[0]
    assert room.spectator(other).name == "TV"
    assert room.spectator(lobby.join(loaded, "TV", screen=True)[0]).name == "TV 2"  # names stay unique


def test_removing_a_person_called_tv_bars_no_screen():
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0, address="198.51.100.7")
    loaded = Loaded(room)
    tv = lobby.join(loaded, "TV", address="203.0.113.50")[0]
    lobby.remove_seat(loaded, host, tv)
    with pytest.raises(Refused):
        lobby.join(loaded, "tv", address="192.0.2.1")  # the person's name is barred
    screen = lobby.join(loaded, "TV", address="203.0.113.50", screen=True)[0]
    assert room.spectator(screen) is not None


def test_a_removed_name_is_barred_once_with_the_address():
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0, address="198.51.100.7")
    loaded = Loaded(room)
    zed = lobby.join(loaded, "Zed", address="203.0.113.50")[0]
    lobby.remove_seat(loaded, host, zed)
    lobby.set_room(loaded, host, None, readmit=True)
    zed = lobby.join(loaded, "zed", address="203.0.113.50")[0]
    lobby.remove_seat(loaded, host, zed)
    assert len(room.barred) == len(set(room.barred)) == 2  # the name once, and the address


def test_a_refused_start_changes_nothing_and_a_waiting_spectator_takes_a_freed_seat():
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0)
    loaded = Loaded(room)
    with pytest.raises(Refused):
        lobby.start(loaded, host, 1000)
    assert room.status == "lobby" and room.round == 0 and room.match == 0
    room.spectators.append(Spectator("p-waiting", "Wes", "hash"))  # came mid-round, the seats full then
    events = lobby.start(loaded, host, 1000)
    assert [s.id for s in room.seats] == [host, "p-waiting"] and room.spectators == []
    assert events[0].kind.value == "joined"


def test_a_seat_removed_after_a_round_keeps_its_name_on_the_finished_table_until_the_next():
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0)
    loaded = Loaded(room)
    bob = lobby.join(loaded, "Bob")[0]
    lobby.join(loaded, "Cat")
    lobby.start(loaded, host, 1000)
    room.status = ROUND_OVER
    lobby.remove_seat(loaded, host, bob)
    assert room.table()[bob].name == "Bob"  # not the raw id: the round just played lists Bob
    assert bob not in {s.id for s in room.seats}
    lobby.rematch(loaded, host, 2000)
    assert bob not in room.table()


def test_a_room_written_by_a_newer_process_still_loads():
    """Processes of two versions share one Redis during a rolling upgrade: fields this one does
    not know are left aside, not a crash on every read of the room."""
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0)
    lobby.join(Loaded(room), "Bob", screen=True)
    d = room.to_dict()
    d["later_field"] = 1
    d["seats"][0]["later_seat_field"] = "x"
    d["spectators"][0]["later_spectator_field"] = True
    again = Room.from_dict(d)
    assert again.seats[0].name == "Ann" and again.spectators[0].screen and again.host == host


# one card each, four cards in all: a deck that deals two seats and not four
TIGHT = {"hand_size": 1, "deck": {"r-1": 1, "y-1": 1, "g-1": 1, "b-1": 1}}


@pytest.mark.parametrize("over", [ROUND_OVER, MATCH_OVER])
def test_a_rematch_the_deck_cannot_deal_changes_nothing(over: str):
    """Bug: a refused rematch had seated the waiting spectators (and, after a match, cleared
    the scores) before the deal refused, and the next accepted message stored the change."""
    room, host, _ = lobby.new_room("ABCDE", "Ann", TIGHT, 0)
    loaded = Loaded(room)
    lobby.add_bot(loaded, host, "easy")
    lobby.start(loaded, host, 0)
    for name in ("Cat", "Dan"):  # they come while the round plays
        assert lobby.join(loaded, name)[2] is True
    room.status = over  # the round ends (how is not what this checks)
    room.scores = {s.id: 7 for s in room.seats}
    before = room.to_dict()
    with pytest.raises(Refused) as refused:
        lobby.rematch(loaded, host, 1000)
    assert refused.value.code == "bad_rules"
    assert room.to_dict() == before
    with pytest.raises(Refused):
        lobby.start(loaded, host, 1000)  # (not in the lobby either)
    assert room.to_dict() == before


def test_a_newcomer_between_rounds_watches_and_takes_a_seat_when_the_host_goes_back_to_the_lobby():
    """Bug: joined after a round, they held a seat yet were in no list: the view's players are
    the finished round's, and they were no spectator."""
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0)
    loaded = Loaded(room)
    lobby.add_bot(loaded, host, "easy")
    lobby.start(loaded, host, 0)
    for over in (ROUND_OVER, MATCH_OVER):
        room.status = over
        pid, _, spectator, _ = lobby.join(loaded, f"Eve {over}")
        assert spectator and room.spectator(pid) is not None and room.seat(pid) is None
    events = lobby.back_to_lobby(loaded, host)
    assert [s.name for s in room.seats][-2:] == ["Eve round_over", "Eve match_over"]
    assert not room.spectators and [e.kind for e in events].count("joined") == 2


def test_a_leaver_whose_seat_a_bot_keeps_for_the_round_comes_back_under_another_name():
    """The bot that keeps a leaver's seat for the rest of the match keeps their name: the table
    stays as everyone saw it, and two members never share a name (protocol.md "Names")."""
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0)
    loaded = Loaded(room)
    bob = lobby.join(loaded, "Bob")[0]
    lobby.start(loaded, host, 0)
    lobby.leave(loaded, bob)
    assert room.seat(bob).bot is not None and room.seat(bob).name == "Bob"
    room.status = ROUND_OVER
    with pytest.raises(Refused) as refused:
        lobby.join(loaded, "bob")
    assert refused.value.code == "name_taken"
    again = lobby.join(loaded, "Bob again")[0]
    lobby.back_to_lobby(loaded, host)
    assert room.seat(again).name == "Bob again" and room.seat(bob).name == "Bob"


def _rooms_at_each_stage():
    """(name, loaded, host, human, spectator, bot) in the lobby, in play, after a round and
    after a match, each with a spectator waiting and a deck that deals two seats, not four."""
    for stage in (LOBBY, PLAYING, ROUND_OVER, MATCH_OVER):
        room, host, _ = lobby.new_room("ABCDE", "Ann", TIGHT, 0)
        loaded = Loaded(room)
        lobby.add_bot(loaded, host, "easy")
        bot = room.seats[-1].id
        if stage == LOBBY:  # a third seat: the deck does not deal it
            yield stage, loaded, host, lobby.join(loaded, "Dan")[0], None, bot
            continue
        lobby.start(loaded, host, 0)
        spectator = lobby.join(loaded, "Cat")[0]
        human = lobby.join(loaded, "Dan")[0]  # (a spectator too, until seated)
        room.status = stage
        yield stage, loaded, host, human, spectator, bot


def _calls(host, human, spectator, bot):
    someone = [p for p in (host, human, spectator, "p-nobody") if p]
    for who in someone:
        yield "set_rules", lambda lo, w=who: lobby.set_rules(lo, w, {"hand_size": 99})
        yield "add_bot", lambda lo, w=who: lobby.add_bot(lo, w, "genius")
        yield "set_bot", lambda lo, w=who: lobby.set_bot(lo, w, bot, "hard")
        yield "remove_seat", lambda lo, w=who: lobby.remove_seat(lo, w, host)
        yield "remove_seat", lambda lo, w=who: lobby.remove_seat(lo, w, "p-nobody")
        yield "remove_seat", lambda lo, w=who: lobby.remove_seat(lo, w, bot)
        yield "start", lambda lo, w=who: lobby.start(lo, w, 1000)
        yield "rematch", lambda lo, w=who: lobby.rematch(lo, w, 1000)
        yield "lobby", lambda lo, w=who: lobby.back_to_lobby(lo, w)
        yield "set_room", lambda lo, w=who: lobby.set_room(lo, w, True, False)
        yield "leave", lambda lo, w=who: lobby.leave(lo, w)
        yield "react", lambda lo, w=who: lobby.react(lo, w, "nonsense", 1000, 1000)


def test_every_refused_room_command_at_every_stage_changes_nothing():
    """protocol.md: a refused message changes nothing. Each room command, from the host, a
    player, a spectator and a stranger, at each stage of a room: when it is refused, the room
    and its round are as they were."""
    refused = 0
    for stage, loaded, host, human, spectator, bot in _rooms_at_each_stage():
        for name, call in _calls(host, human, spectator, bot):
            trial = copy.deepcopy(loaded)
            before, game = trial.room.to_dict(), trial.game
            try:
                call(trial)
            except Refused:
                refused += 1
                assert trial.room.to_dict() == before, (stage, name)
                assert trial.game is game, (stage, name)
    assert refused > 80  # most of them are refused: the check is not empty


def test_a_rematch_after_a_match_deals_round_one_of_the_next_match():
    """Bug: "New match" on the match-over panel dealt "round 2" of the new match (the round count
    went on), where a new match from the lobby dealt round 1."""
    room, host, _ = lobby.new_room("ABCDE", "Ann", {}, 0)
    loaded = Loaded(room)
    lobby.add_bot(loaded, host, "easy")
    lobby.start(loaded, host, 0)
    match = room.match
    room.status = ROUND_OVER
    lobby.rematch(loaded, host, 1000)  # the match's second round
    assert (room.match, room.round) == (match, 2)
    room.status = MATCH_OVER
    events = lobby.rematch(loaded, host, 2000)
    assert (room.match, room.round) == (match + 1, 1)
    assert [e.data["round"] for e in events if e.kind == "started"] == [1]


def test_a_player_seated_after_the_host_dropped_never_stands_in_for_them():
    """protocol.md "The host": of the connected humans seated, only those here before the
    creator dropped may stand in; the creator takes the role back with their next hello."""
    room, ann, _ = lobby.new_room("ABCDE", "Ann", {}, 0)
    loaded = Loaded(room)
    bob = lobby.join(loaded, "Bob", now_ms=1_000)[0]
    lobby.start(loaded, ann, 2_000)
    for pid in (ann, bob):
        presence.connected(loaded, pid, "n1")
    presence.disconnected(loaded, ann, 5_000, "n1")
    room.status = ROUND_OVER
    lobby.join(loaded, "Eve", now_ms=6_000)  # a spectator who takes a seat back in the lobby
    eve = room.spectators[0].id
    presence.connected(loaded, eve, "n1")
    presence.disconnected(loaded, bob, 7_000, "n1")
    presence.replace_by_bot(loaded, room.seat(bob), 200_000)
    presence.replace_by_bot(loaded, room.seat(ann), 200_000)
    assert room.host == ann  # nobody who was here stands in: not Eve
    lobby._seat_spectators(room)
    presence.settle_host(room)
    assert room.seat(eve) is not None and room.host == ann
    presence.connected(loaded, bob, "n1")  # Bob was here: he stands in
    assert room.host == bob
    presence.connected(loaded, ann, "n1")
    assert room.host == ann
