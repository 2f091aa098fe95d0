"""How a room command turns out when it changes nothing: refused (with the protocol's error
code), or nothing to do. A command that changes the room returns its events instead."""

from __future__ import annotations


class NoChange(Exception):
    """The intent asks for what already is (a second hello of a connected player): no commit."""


class Thinking(Exception):
    """A bot's move is being searched for elsewhere: nothing to commit yet. Its result comes
    back as a command of its own (``bot_move``), for the version it was asked at."""


class Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message
