"""The room document: a document from before the record's steps moved to a list of their own
hands its steps to the next commit; the rules are written once and read back everywhere."""

from __future__ import annotations

import orjson
import pytest

from app.rooms.model import Loaded, Room, Seat, game_part
from engine import STANDARD_DECK, GameState, make_rules, new_game


def _room(record):
    return Room(code="ABCDEF", version=7, host="p1", created_ms=0, rules={}, seats=[Seat("p1", "Ann")],
                record=record)


def test_legacy_steps_in_the_document_go_to_the_next_commit():
    steps = [["p1", {"type": "draw"}, 5, "m1"], [None, {"type": "expire"}, 9]]
    loaded = Loaded(_room({"version": 1, "seed": "s", "steps": steps}))
    assert loaded.steps == steps and loaded.new_round  # the list starts again with them
    assert "steps" not in loaded.room.record


def test_a_current_document_has_nothing_pending():
    loaded = Loaded(_room({"version": 1, "seed": "s"}))
    assert loaded.steps == [] and not loaded.new_round


def _playing(options=None):
    rules = make_rules(options or {})
    room = _room(None)
    room.rules = rules.to_dict()
    room.seats.append(Seat("p2", "Bob"))
    state = new_game(("p1", "p2"), rules, "seed", now_ms=5).state
    room.game = game_part(state, room.rules)
    room.record = {"version": 1, "seed": "seed"}  # a record in play holds no rules
    return room, state


def _reread(room: Room) -> Room:
    return Room.from_dict(orjson.loads(room.document()))


def test_the_document_holds_the_rules_once_and_reads_back_the_same_game():
    room, state = _playing({"target_score": 750})
    document = orjson.loads(room.document())
    assert "rules" not in document["game"] and "rules" not in document["record"]
    back = _reread(room)
    assert GameState.from_dict(back.game).to_dict() == state.to_dict()
    assert back.record_rules() == room.rules and back.record_rules()["target_score"] == 750


def test_a_game_under_other_rules_than_the_rooms_keeps_its_own():
    room, state = _playing({"target_score": 750})
    room.rules = make_rules({"target_score": 300}).to_dict()  # the lobby after a match, say
    room.game = game_part(state, room.rules)
    back = _reread(room)
    assert GameState.from_dict(back.game).rules.target_score == 750
    assert back.rules["target_score"] == 300


def test_a_document_written_with_the_rules_inside_reads_as_before():
    room, state = _playing({"target_score": 750})
    room.game = state.to_dict()  # as written before the rules moved out
    room.record = {"version": 1, "seed": "seed", "rules": make_rules({"hand_size": 5}).to_dict()}
    room.rules = make_rules({}).to_dict()
    back = _reread(room)
    assert GameState.from_dict(back.game).to_dict() == state.to_dict()
    assert back.record_rules()["hand_size"] == 5


def test_the_standard_deck_is_left_out_of_the_document_and_put_back_on_reading():
    room, state = _playing({"target_score": 750})
    rules = room.rules
    document = room.document()
    assert room.rules is rules  # the field is the rules again after the call
    assert "deck" not in orjson.loads(document)["rules"]
    assert len(document) < len(orjson.dumps(room)) - 600  # ~700 bytes of deck
    back = _reread(room)
    assert back.rules == rules and back.rules["deck"] == STANDARD_DECK
    assert list(back.rules) == list(rules)  # the same keys in the same order (views are JSON)
    assert GameState.from_dict(back.game).to_dict() == state.to_dict()
    assert room.document() == document  # the same bytes again (the rules' JSON is kept)


def test_a_custom_deck_is_written_whole():
    deck = {**STANDARD_DECK, "w-wild": 4, "w-draw10": 0}
    room, state = _playing({"deck": deck})
    assert orjson.loads(room.document())["rules"]["deck"] == {k: v for k, v in deck.items() if v}
    back = _reread(room)
    assert back.rules == room.rules and GameState.from_dict(back.game).to_dict() == state.to_dict()


def test_a_document_that_cannot_be_written_leaves_the_room_as_it_was():
    room, _ = _playing()
    rules = room.rules
    room.scores = {"p1": object()}  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        room.document()
    assert room.rules is rules


def test_the_document_holds_exactly_the_fields_of_the_room_and_its_members(caplog):
    """orjson writes a dataclass without slots from its ``__dict__`` (~3x faster than through
    its fields, ~10 us a commit): an attribute set on a room or a seat that is not a field
    must not reach Redis, and every field must."""
    from dataclasses import fields

    from app.rooms.model import Spectator, _only_fields

    room, _ = _playing()
    room.spectators.append(Spectator("s1", "Cat", "hash"))
    assert _only_fields(room)  # the fast path, as every commit takes it
    plain = room.document()
    room.stray = "not a field"  # type: ignore[attr-defined]
    room.seats[0].stray = 1  # type: ignore[attr-defined]
    room.spectators[0].conected = True  # type: ignore[attr-defined]  (a misspelt field)
    assert not _only_fields(room)
    with caplog.at_level("WARNING", logger="mercyless.room"):
        document = orjson.loads(room.document())
    assert list(document) == [f.name for f in fields(Room)]
    assert [list(s) for s in document["seats"]] == [[f.name for f in fields(Seat)]] * 2
    assert list(document["spectators"][0]) == [f.name for f in fields(Spectator)]
    assert document == orjson.loads(plain)  # the same document either way
    warned = [r.getMessage() for r in caplog.records if r.name == "mercyless.room"]
    assert warned == ["attributes that are no fields are not stored: "
                      "['Room.stray', 'Seat.stray', 'Spectator.conected']"]
    assert _reread(room).seats == room.seats
