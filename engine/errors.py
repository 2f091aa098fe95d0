"""The engine's typed error family. Codes are protocol.md's error codes (plus a few it allows us
to add), so the server forwards ``err.code`` to the client unchanged."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    BAD_MESSAGE = "bad_message"
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL_CARD = "illegal_card"
    NOT_IN_HAND = "not_in_hand"
    STACK_PENDING = "stack_pending"
    CHOICE_PENDING = "choice_pending"
    NO_CHOICE_PENDING = "no_choice_pending"
    BAD_COLOR = "bad_color"
    BAD_TARGET = "bad_target"
    BAD_TOP = "bad_top"
    GAME_OVER = "game_over"
    NOT_EXPOSED = "not_exposed"
    DRAW_NOT_ALLOWED = "draw_not_allowed"
    PASS_NOT_ALLOWED = "pass_not_allowed"
    MUST_PLAY_DRAWN = "must_play_drawn"
    NOT_ONE_CARD = "not_one_card"
    ALREADY_CALLED = "already_called"
    CANCEL_NOT_ALLOWED = "cancel_not_allowed"
    ELIMINATED = "eliminated"
    NOT_A_PLAYER = "spectator"
    TOO_EARLY = "too_early"
    BAD_RULES = "bad_rules"


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""

    code: ErrorCode = ErrorCode.BAD_MESSAGE

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code.value!r}, {self.message!r})"


class IllegalAction(EngineError):
    """An action the rules refuse. The state it was tried on is unchanged."""


class RulesError(EngineError):
    """A rules object with an unknown option or a bad value; ``field`` names the option."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(ErrorCode.BAD_RULES, f"{field}: {message}")
        self.field = field
