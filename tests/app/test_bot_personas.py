"""Bots with personality (issue #25): a name of its own from a list and a colour of its own for
each bot of a room, both drawn from the room and never from the global RNG; the host changes a
bot's level in the lobby or between rounds, and a refused change changes nothing."""

from __future__ import annotations

import copy
import random

import pytest

from app.core.protocol import BadMessage, parse_message
from app.core.settings import Settings
from app.rooms import bot_seats, lobby, personas
from app.rooms.model import LOBBY, MATCH_OVER, PLAYING, ROUND_OVER, Loaded, Room, Spectator, room_views
from app.rooms.outcomes import NoChange, Refused
from engine.ai import EasyBot, HardBot, NormalBot


def _room(code: str = "ABCDE", *humans: str, host: str = "p-ann") -> tuple[Loaded, str]:
    """A lobby whose host, Ann, has the id ``host`` (her avatar's colour comes from it)."""
    room, _, _ = lobby.new_room(code, "Ann", {}, 0)
    room.seats[0].id = room.host = host
    loaded = Loaded(room)
    for name in humans:
        lobby.join(loaded, name)
    return loaded, host


def _bots(room: Room) -> list[tuple[str, str, str | None]]:
    return [(s.id, s.name, s.bot) for s in room.seats if s.id.startswith("b")]


def _gap(a: int, b: int) -> int:
    return min(abs(a - b), 360 - abs(a - b))


# -- names and colours ----------------------------------------------------------------------------

def test_a_full_room_of_bots_has_distinct_names_and_colours_spread_round_the_wheel():
    loaded, host = _room()
    for _ in range(9):
        lobby.add_bot(loaded, host, "easy")
    names = [name for _, name, _ in _bots(loaded.room)]
    assert len(set(names)) == 9 and set(names) <= set(personas.NAMES)
    assert len({name[0] for name in ["Ann", *names]}) == 10  # the avatars' letters differ too
    hues = [personas.hue(s.id, s.name) for s in loaded.room.seats]  # Ann's first
    assert hues[1:] == [personas.HUES[name] for name in names]
    assert hues[0] == personas.hue("p-ann", "Ada")  # a person's colour comes from the id alone

    def spread(hues: list[int]) -> int:
        return min(_gap(a, b) for i, a in enumerate(hues) for b in hues[i + 1:])

    # each new bot takes the free name farthest from the colours in use: the first bot's lies
    # opposite Ann's (as near as the list's 15-degree steps go), the next two a quarter round,
    # and the tenth seat still has a colour of its own
    assert spread(hues[:2]) >= 165 and spread(hues[:4]) >= 75 and spread(hues[:5]) >= 45
    assert spread(hues) >= 15 > 0


def test_the_names_come_from_the_room_not_the_global_rng():
    def names(code: str, host: str = "p-ann") -> list[str]:
        loaded, host = _room(code, host=host)
        for _ in range(4):
            lobby.add_bot(loaded, host, "normal")
        return [name for _, name, _ in _bots(loaded.room)]

    random.seed(1)
    first = names("QWERT")
    random.seed(2)
    assert names("QWERT") == first  # the same room, the same bots, whatever the global RNG did
    # another room (its people's colours, and its code where colours tie) has other bots
    assert len({tuple(names("QWERT", host)) for host in ("p-ann", "p0123456789", "pdeadbeef00")}) == 3
    assert names("QWERT", "p0123456789")[2:] != names("ZZZZZ", "p0123456789")[2:]


def test_a_bot_never_takes_the_name_of_someone_in_the_room():
    loaded, host = _room("ZXCVB")
    probe = copy.deepcopy(loaded)
    lobby.add_bot(probe, host, "easy")
    first = _bots(probe.room)[0][1]  # what the room's first bot would be called
    # a person of that name (any case), seated or watching, keeps it to themselves
    lobby.join(loaded, first.upper())
    loaded.room.spectators.append(Spectator("p-watch", "Watcher", "hash"))
    lobby.add_bot(loaded, host, "easy")
    assert _bots(loaded.room)[0][1] != first
    probe = copy.deepcopy(loaded)
    lobby.add_bot(probe, host, "easy")
    watched = _bots(probe.room)[1][1]  # what the second bot would be called
    loaded.room.spectators[0].name = watched.lower()  # a spectator's name is kept free too
    lobby.add_bot(loaded, host, "easy")
    assert {first, watched}.isdisjoint(name for _, name, _ in _bots(loaded.room))


def test_a_newcomer_called_like_a_bot_is_refused_in_the_lobby_and_in_play():
    """protocol.md "Names": a name that equals or looks like a member's, a bot's too, is taken."""
    loaded, host = _room("WSXED")
    lobby.add_bot(loaded, host, "easy")
    (bot, name, _), = _bots(loaded.room)
    for status in ("lobby", "playing"):
        if status == "playing":
            lobby.start(loaded, host, 1000)
        before = loaded.room.to_dict()
        with pytest.raises(Refused) as refused:
            lobby.join(loaded, name.upper())
        assert refused.value.code == "name_taken" and loaded.room.to_dict() == before
    assert loaded.room.seat(bot).name == name


def test_once_every_name_is_taken_a_bot_is_numbered():
    taken = [*personas.NAMES, "bot 1"]
    seats = [(f"b{i:010}", name) for i, name in enumerate(personas.NAMES)]
    assert personas.pick_name("ABCDE", taken, seats) == "Bot 2"


def test_every_view_carries_each_seats_colour():
    loaded, host = _room("HJKLM", "Bob")
    lobby.add_bot(loaded, host, "hard")
    (bot, name, _), = _bots(loaded.room)
    bob = loaded.room.seats[1].id
    # a person's colour comes from the id as the client computed it (web/js/lobby.js avatar:
    # hash * 31 + code, 32 bits, mod 360; these figures are the browser's), whatever the name
    assert personas.hue("p-ann", "Ann") == personas.hue("p-ann", name) == 84
    assert personas.hue("pf3a9c01b2e", "Bob") == 278
    _, views = room_views(loaded, [host])
    hues = {p["id"]: p["hue"] for p in views[host]["players"]}
    assert hues == {host: 84, bob: personas.hue(bob, "Bob"), bot: personas.HUES[name]}
    lobby.start(loaded, host, 1000)
    _, views = room_views(loaded, [host, None], 1000)
    for view in views.values():  # at the table too, for players and spectators alike
        assert {p["id"]: p["hue"] for p in view["players"]} == hues
        assert {p["id"]: p["level"] for p in view["players"]}[bot] == "hard"


# -- the host sets a bot's level ------------------------------------------------------------------

def test_the_host_sets_a_bots_level_in_the_lobby():
    loaded, host = _room("PLMKO", "Bob")
    lobby.add_bot(loaded, host, "easy")
    (bot, _, _), = _bots(loaded.room)
    events = lobby.set_bot(loaded, host, bot, "hard")
    assert [(e.kind.value, e.data) for e in events] == [
        ("bot_level", {"player": bot, "level": "hard", "by": host})]
    assert loaded.room.seat(bot).bot == "hard"
    _, views = room_views(loaded, [host])
    assert {p["id"]: p["level"] for p in views[host]["players"]}[bot] == "hard"
    with pytest.raises(NoChange):  # the level it has already: acknowledged, nothing to commit
        lobby.set_bot(loaded, host, bot, "hard")


def test_refused_level_changes_change_nothing():
    loaded, host = _room("QAZWS", "Bob")
    bob = loaded.room.seats[1].id
    lobby.add_bot(loaded, host, "normal")
    (bot, _, _), = _bots(loaded.room)
    before = loaded.room.to_dict()
    for who, target, level, code in ((bob, bot, "hard", "not_host"),
                                     (host, bob, "hard", "not_a_bot"),
                                     (host, "b0000000000", "hard", "not_a_bot"),
                                     (host, bot, "godlike", "bad_level"),
                                     (host, bot, "", "bad_level")):
        with pytest.raises(Refused) as refused:
            lobby.set_bot(loaded, who, target, level)
        assert refused.value.code == code, (who, target, level)
        assert loaded.room.to_dict() == before
    lobby.start(loaded, host, 1000)
    playing = loaded.room.to_dict()
    with pytest.raises(Refused) as refused:  # not while a round plays
        lobby.set_bot(loaded, host, bot, "hard")
    assert refused.value.code == "not_in_lobby" and loaded.room.to_dict() == playing
    # a seat a bot only stands in for (its player is away) is no bot to set
    seat = loaded.room.seat(bob)
    seat.bot, seat.away = "easy", True
    loaded.room.status = ROUND_OVER
    with pytest.raises(Refused) as refused:
        lobby.set_bot(loaded, host, bob, "hard")
    assert refused.value.code == "not_a_bot" and seat.bot == "easy"


def test_between_rounds_the_next_rounds_bot_plays_at_the_new_level():
    loaded, host = _room("RFVTG")
    lobby.add_bot(loaded, host, "easy")
    (bot, _, _), = _bots(loaded.room)
    settings = Settings()
    lobby.start(loaded, host, 1000)
    assert loaded.room.status == PLAYING
    assert type(bot_seats.bot_for(loaded, bot, loaded.room.seat(bot).bot, settings)) is EasyBot
    loaded.room.status = ROUND_OVER  # as a round that ended
    lobby.set_bot(loaded, host, bot, "normal")
    lobby.rematch(loaded, host, 2000)
    assert type(bot_seats.bot_for(loaded, bot, loaded.room.seat(bot).bot, settings)) is NormalBot
    loaded.room.status = ROUND_OVER
    lobby.back_to_lobby(loaded, host)
    assert loaded.room.status == LOBBY
    lobby.set_bot(loaded, host, bot, "hard")
    lobby.start(loaded, host, 3000)
    assert type(bot_seats.bot_for(loaded, bot, loaded.room.seat(bot).bot, settings)) is HardBot


def test_a_new_match_gets_new_bots_even_at_the_same_round_number():
    """A match that ended in its first round, then new rules and a new match: round 1 again, but a
    new deal, so each bot seat gets a new bot, playing by the new rules with a fresh memory (the
    old one played Discard All with a top the new rules no longer let it choose)."""
    loaded, host = _room("YHNUJ")
    lobby.set_rules(loaded, host, {"discard_all_top": "choose"})
    lobby.add_bot(loaded, host, "normal")
    (bot, _, _), = _bots(loaded.room)
    settings = Settings()
    lobby.start(loaded, host, 1000)
    first = bot_seats.bot_for(loaded, bot, "normal", settings)
    assert first.rules.discard_all_top.value == "choose"
    assert bot_seats.bot_for(loaded, bot, "normal", settings) is first  # the round's own bot
    loaded.room.status = MATCH_OVER  # as a round that ended the match
    lobby.back_to_lobby(loaded, host)
    lobby.set_rules(loaded, host, {"discard_all_top": "discard_all"})
    lobby.start(loaded, host, 2000)
    assert loaded.room.round == 1
    second = bot_seats.bot_for(loaded, bot, "normal", settings)
    assert second is not first and second.rules.discard_all_top.value == "discard_all"


def test_set_bot_is_a_strict_message():
    msg = parse_message({"type": "set_bot", "id": "m1", "player_id": "b0123456789", "level": "hard"})
    assert (msg.player_id, msg.level) == ("b0123456789", "hard")
    for raw in ({"type": "set_bot", "id": "m2", "player_id": "b0123456789"},
                {"type": "set_bot", "id": "m3", "level": "hard"},
                {"type": "set_bot", "id": "m4", "player_id": "b0123456789", "level": 3},
                {"type": "set_bot", "id": "m5", "player_id": "b0123456789", "level": "hard", "name": "x"}):
        with pytest.raises(BadMessage) as bad:
            parse_message(raw)
        assert (bad.value.code, bad.value.msg_id) == ("bad_message", raw["id"])
