"""The room document: a document from before the record's steps moved to a list of their own
hands its steps to the next commit."""

from __future__ import annotations

from app.room import Loaded, Room, Seat


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
