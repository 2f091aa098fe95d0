"""One table of room commands (app/rooms/commands.py) for every message a client may send."""

from __future__ import annotations

from app.core.protocol import GAME_TYPES, MESSAGE_TYPES, BadMessage, parse_message
from app.rooms.commands import COMMANDS

#: the server's own commands, which no client message names
SERVER_COMMANDS = {"join", "use_deal", "hello", "drop", "node_lost", "reclaimed", "tick", "bot_move"}


def test_every_client_message_has_its_command_and_no_command_is_left_over():
    assert set(COMMANDS) >= MESSAGE_TYPES
    assert COMMANDS.keys() - MESSAGE_TYPES == SERVER_COMMANDS
    assert GAME_TYPES <= MESSAGE_TYPES


def test_a_server_command_is_no_client_message():
    for kind in SERVER_COMMANDS:
        try:
            parse_message({"type": kind, "id": "m1"})
        except BadMessage as refused:
            assert refused.code == "unknown_type"
        else:
            raise AssertionError(f"{kind} parsed as a client message")
