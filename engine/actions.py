"""Actions: what a player (or the server's clock) asks the engine to do.

One small immutable value type, :class:`Action`, covers every kind; fields a kind does not use
stay ``None``. ``player`` is never part of an action: the caller says who acts (the server takes
it from the connection, never from the message).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple

from ._records import record_maker
from .errors import ErrorCode, IllegalAction


class ActionKind(StrEnum):
    # a seated player's moves (protocol.md "Client -> server")
    PLAY = "play"
    DRAW = "draw"
    PASS = "pass"
    CHOOSE = "choose"
    CANCEL = "cancel"
    UNO = "uno"
    CATCH = "catch"
    # the server's own steps, taken with ``player=None`` at a time ``now_ms``
    EXPIRE = "expire"  # catch windows whose time is up close
    TIMEOUT = "timeout"  # the turn timer ran out: act for the player
    RESOLVE = "resolve"  # resolve a pending choice for an absent player


SYSTEM_KINDS = frozenset({ActionKind.EXPIRE, ActionKind.TIMEOUT, ActionKind.RESOLVE})
_FIELDS = ("card", "color", "target", "top")


class Action(NamedTuple):
    kind: ActionKind
    card: str | None = None
    color: str | None = None  # wire colour name: red yellow green blue
    target: str | None = None  # a player id
    top: str | None = None  # Discard All `choose`: the card to leave on top
    uno: bool = False

    def to_wire(self) -> dict[str, Any]:
        """The action as protocol.md spells it (without ``id``), for records and bots."""
        out: dict[str, Any] = {"type": self.kind.value}
        for name in _FIELDS:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.uno:
            out["uno"] = True
        return out

    @classmethod
    def from_wire(cls, message: dict[str, Any]) -> Action:
        """Parse the game part of a client message; unknown extra keys are ignored here
        (the server's edge validation decides what a message may carry)."""
        try:
            kind = ActionKind(message.get("type"))
        except ValueError:
            raise IllegalAction(ErrorCode.BAD_MESSAGE, "unknown action type") from None
        values: dict[str, Any] = {}
        for name in _FIELDS:
            value = message.get(name)
            if value is not None and not isinstance(value, str):
                raise IllegalAction(ErrorCode.BAD_MESSAGE, f"{name} must be a string")
            values[name] = value
        uno = message.get("uno", False)
        if not isinstance(uno, bool):
            raise IllegalAction(ErrorCode.BAD_MESSAGE, "uno must be true or false")
        return cls(kind, uno=uno, **values)


#: ``new_action((kind, card, color, target, top, uno))``: an :class:`Action` from all six fields,
#: at C speed (see :func:`~engine._records.record_maker`), for the engine's own hot paths.
new_action = record_maker(Action)


def play(card: str, *, color: str | None = None, target: str | None = None,
         top: str | None = None, uno: bool = False) -> Action:
    return Action(ActionKind.PLAY, card, color, target, top, uno)


DRAW = Action(ActionKind.DRAW)
PASS = Action(ActionKind.PASS)
CANCEL = Action(ActionKind.CANCEL)
UNO = Action(ActionKind.UNO)
EXPIRE = Action(ActionKind.EXPIRE)
TIMEOUT = Action(ActionKind.TIMEOUT)
RESOLVE = Action(ActionKind.RESOLVE)


def choose(*, color: str | None = None, target: str | None = None, top: str | None = None) -> Action:
    return Action(ActionKind.CHOOSE, None, color, target, top)


def catch(target: str) -> Action:
    return Action(ActionKind.CATCH, target=target)
