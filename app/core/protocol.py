"""The WebSocket wire contract (protocol.md): typed client messages, error codes, close codes.

Parsing is strict: orjson first (it refuses NaN, lone surrogates, numbers beyond 64 bits and
nesting past its depth limit), then a pydantic model per ``type`` with unknown fields refused.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Annotated, Any, Literal, get_args

import orjson
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

ID_MAX = 64


class Close(IntEnum):
    NORMAL = 1000
    POLICY = 1008  # an origin not allowed (before the handshake: 403), a socket that flooded
    TOO_LARGE = 1009
    RESTART = 1012  # the process is going away, or the room's home did: reconnect
    TRY_AGAIN_LATER = 1013
    BAD_TOKEN = 4401
    NO_ROOM = 4404
    REPLACED = 4409
    HELLO_TIMEOUT = 4408


class Err(StrEnum):
    """Server-side error codes (the engine's come from ``engine.ErrorCode``)."""

    BAD_MESSAGE = "bad_message"
    UNKNOWN_TYPE = "unknown_type"
    NOT_HOST = "not_host"
    NOT_IN_LOBBY = "not_in_lobby"
    RATE_LIMITED = "rate_limited"
    TOO_LARGE = "too_large"
    BAD_RULES = "bad_rules"
    ROOM_FULL = "room_full"
    ROOM_NOT_FOUND = "room_not_found"
    SPECTATOR = "spectator"
    NOT_ENOUGH_PLAYERS = "not_enough_players"
    NOT_OVER = "not_over"
    BAD_LEVEL = "bad_level"
    BAD_REACTION = "bad_reaction"
    BAD_NAME = "bad_name"
    NAME_TAKEN = "name_taken"
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"
    GAME_OVER = "game_over"
    NOT_STARTED = "not_started"
    ROOM_LOCKED = "room_locked"  # the host locked the room: no new joiners
    BARRED = "barred"  # removed by the host: the same name or address cannot join again
    SERVER_FULL = "server_full"  # the server holds as many rooms as it may
    NOT_A_BOT = "not_a_bot"  # set_bot names no bot's seat
    NOT_DISCONNECTED = "not_disconnected"  # bot_plays names no disconnected person's seat
    DEAL_MISMATCH = "deal_mismatch"  # replay_deal: not as many seats as the deal was dealt to
    BAD_PHRASE = "bad_phrase"  # chat: a phrase id not in CHAT_PHRASES
    MUTED = "muted"  # chat: the host muted this player


REACTIONS = ("gg", "ouch", "uno", "lol", "thumbs_up", "angry", "wow", "clap")
# quick chat (issue #47): ids only, each reader's client says them in its own language; no free
# text, so nothing to moderate
CHAT_PHRASES = ("hi_all", "your_turn", "nice_one", "no_mercy", "wait_for_me", "gg", "one_more_round",
                "sorry", "brb", "so_close")

Str = Annotated[str, StringConstraints(max_length=64)]
MsgId = Annotated[str, StringConstraints(min_length=1, max_length=ID_MAX)]


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    id: MsgId


class SetRules(_Msg):
    type: Literal["set_rules"]
    rules: dict[str, Any]


class AddBot(_Msg):
    type: Literal["add_bot"]
    level: Str = "easy"


class SetBot(_Msg):
    """Host, in the lobby or between rounds: a bot's level."""

    type: Literal["set_bot"]
    player_id: Str
    level: Str


class BotPlays(_Msg):
    """Host, while a round plays or between rounds: a disconnected player's seat goes to its bot
    now (the player takes it back with a hello)."""

    type: Literal["bot_plays"]
    player_id: Str


class RemoveSeat(_Msg):
    type: Literal["remove_seat"]
    player_id: Str


class Start(_Msg):
    type: Literal["start"]


class Play(_Msg):
    type: Literal["play"]
    card: Str
    color: Str | None = None
    target: Str | None = None
    top: Str | None = None
    uno: bool = False


class Draw(_Msg):
    type: Literal["draw"]


class Pass(_Msg):
    type: Literal["pass"]


class Choose(_Msg):
    type: Literal["choose"]
    color: Str | None = None
    target: Str | None = None
    top: Str | None = None


class Cancel(_Msg):
    type: Literal["cancel"]


class Uno(_Msg):
    type: Literal["uno"]


class Catch(_Msg):
    type: Literal["catch"]
    target: Str


class Rematch(_Msg):
    type: Literal["rematch"]


class ReplayDeal(_Msg):
    """Host, after a round: the next round is dealt from the finished round's seed (app/rooms/deals.py)."""

    type: Literal["replay_deal"]


class EndNight(_Msg):
    """Host, after a round: the night is over, and every screen shows its story (app/rooms/night.py)."""

    type: Literal["end_night"]


class BackToLobby(_Msg):
    type: Literal["lobby"]


class SetRoom(_Msg):
    """Host: lock the room (no new joiners) or unlock it; ``readmit`` lets players the host
    removed join again."""

    type: Literal["set_room"]
    locked: bool | None = None
    readmit: bool = False


class Leave(_Msg):
    type: Literal["leave"]


class React(_Msg):
    type: Literal["react"]
    reaction: Str


class Chat(_Msg):
    """A quick-chat phrase, by its id (CHAT_PHRASES)."""

    type: Literal["chat"]
    phrase: Str


class Mute(_Msg):
    """Host: mute a player's quick chat, or unmute it."""

    type: Literal["mute"]
    player_id: Str
    muted: bool


class Sync(_Msg):
    type: Literal["sync"]


ClientMsg = Annotated[
    SetRules | AddBot | SetBot | BotPlays | RemoveSeat | Start | Play | Draw | Pass | Choose | Cancel | Uno
    | Catch | Rematch | ReplayDeal | EndNight | BackToLobby | SetRoom | Leave | React | Chat | Mute | Sync,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(ClientMsg)
#: every message a client may send, by its ``type`` (read off the union: a new message is its
#: model and its place in ``ClientMsg``, nothing more here)
MESSAGE_TYPES = frozenset(get_args(model.model_fields["type"].annotation)[0]
                          for model in get_args(get_args(ClientMsg)[0]))
GAME_TYPES = frozenset(["play", "draw", "pass", "choose", "cancel", "uno", "catch"])


class BadMessage(Exception):
    def __init__(self, code: str, message: str, msg_id: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.msg_id = msg_id


def parse_json(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except (orjson.JSONDecodeError, RecursionError, ValueError, UnicodeError):
        raise BadMessage(Err.BAD_MESSAGE, "not valid JSON") from None


def usable_id(raw: dict[str, Any]) -> str | None:
    msg_id = raw.get("id")
    if isinstance(msg_id, str) and 1 <= len(msg_id) <= ID_MAX:
        return msg_id
    return None


def parse_message(raw: Any) -> Any:
    """A validated client message, or :class:`BadMessage` with the right code and id."""
    if not isinstance(raw, dict):
        raise BadMessage(Err.BAD_MESSAGE, "a message is a JSON object")
    msg_id = usable_id(raw)
    kind = raw.get("type")
    if msg_id is None:
        raise BadMessage(Err.BAD_MESSAGE, "every message needs a string id (1-64 characters)")
    if not isinstance(kind, str) or kind not in MESSAGE_TYPES:
        raise BadMessage(Err.UNKNOWN_TYPE, "unknown message type", msg_id)
    try:
        return _ADAPTER.validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "message"
        raise BadMessage(Err.BAD_MESSAGE, f"{where}: {first.get('msg', 'invalid')}"[:200], msg_id) from None


def dumps(obj: Any) -> str:
    return orjson.dumps(obj).decode()
