"""The room's own event kinds (app/rooms/events.py), beside the engine's."""

from __future__ import annotations

import pytest

from app.rooms.events import RoomEventKind, event_kind, room_event
from engine import EventKind


def test_the_two_families_share_no_name_on_the_wire():
    assert not {k.value for k in EventKind} & {k.value for k in RoomEventKind}


@pytest.mark.parametrize("kind", [*EventKind, *RoomEventKind])
def test_a_kind_read_back_from_the_wire_is_the_member_it_was(kind):
    assert event_kind(kind.value) is kind


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="no event kind 'bot_renamed'"):
        event_kind("bot_renamed")


def test_a_room_event_is_public_and_goes_on_the_wire_by_its_value():
    event = room_event(RoomEventKind.JOINED, player="p1", name="Ann")
    assert event.owner is None and event.secret is None
    assert event.to_wire("p2") == event.to_wire(None) == {"kind": "joined", "player": "p1", "name": "Ann"}
