"""The edge: a validated game message becomes the engine action the wire form describes."""

from __future__ import annotations

import pytest

from app.core.protocol import GAME_TYPES, parse_message
from app.rooms.play import to_action
from engine import Action

MESSAGES = [
    {"type": "play", "card": "r-5"},
    {"type": "play", "card": "w-draw6", "color": "blue", "uno": True},
    {"type": "play", "card": "r-7", "target": "p2"},
    {"type": "play", "card": "g-discard", "top": "g-3"},
    {"type": "draw"},
    {"type": "pass"},
    {"type": "choose", "color": "green"},
    {"type": "choose", "target": "p3"},
    {"type": "choose", "top": "b-discard"},
    {"type": "cancel"},
    {"type": "uno"},
    {"type": "catch", "target": "p1"},
]


def test_the_messages_cover_every_game_type():
    assert {m["type"] for m in MESSAGES} == GAME_TYPES


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: "-".join(f"{k}={v}" for k, v in m.items()))
def test_a_game_message_becomes_the_action_its_wire_form_describes(message):
    action = to_action(parse_message({**message, "id": "m1"}))
    assert action == Action.from_wire(message)
    assert action.to_wire() == {k: v for k, v in message.items() if v is not False}
