"""A room as data: seats, spectators, rules, the round's engine state and its record.

The whole room is one JSON document in Redis, written with a version check, so one write
commits everything an action changed. :func:`room_views` is the server's single choke point
from room to wire: it adds the ``room`` part to what ``engine.table_views`` (the engine's
choke point) shows each player.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import orjson

from app.rooms import personas
from engine import STANDARD_DECK, GameState, SeatInfo, make_rules
from engine.view import table_views

log = logging.getLogger("mercyless.room")

LOBBY, PLAYING, ROUND_OVER, MATCH_OVER = "lobby", "playing", "round_over", "match_over"

MAX_SEATS = 10


class RoomRules(dict[str, Any]):
    """A room's rules as the wire has them (engine ``Rules.to_dict()``): a frozen mapping,
    replaced as a whole when the host changes them and never changed in place. So what a
    commit derives from them is worked out once and kept on the value itself: their JSON as
    documents hold them, and the engine state's rules mapping they were last found equal to."""

    __slots__ = ("_equal", "_json")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._json: orjson.Fragment | None = None
        self._equal: Any = None

    def _frozen(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a room's rules are replaced, never changed in place")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _frozen  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:  # copies and pickles are built whole, not item by item
        return RoomRules, (dict(self),)

    # -- speed: what a commit writes of the rules, made once per rules value (docs/performance.md)
    def stored_json(self) -> orjson.Fragment:
        """The rules as a room document holds them: without the deck when it is the standard
        one (``Room.from_dict`` puts it back), ~700 of the ~4,200 bytes every commit writes
        and every other process holding the room's sockets parses."""
        if self._json is None:
            written = dict(self)
            if written.get("deck") == STANDARD_DECK:
                del written["deck"]
            self._json = orjson.Fragment(orjson.dumps(written))
        return self._json

    def equal_to(self, wire: dict[str, Any]) -> bool:
        """``wire`` (an engine state's rules mapping: one shared object per rules value) holds
        these rules. The last mapping found equal is kept: ~5 us a commit."""
        if wire is self._equal:
            return True
        if wire != self:
            return False
        self._equal = wire
        return True


class _RulesField:
    """``Room.rules``: whatever mapping is assigned is kept as a :class:`RoomRules` (in the
    instance's ``__dict__``, which orjson writes). No default: ``dataclass`` reads the
    AttributeError of the class-level get as "required"."""

    def __get__(self, room: Any, owner: Any = None) -> RoomRules:
        if room is None:
            raise AttributeError("rules")
        return room.__dict__["rules"]  # type: ignore[no-any-return]

    def __set__(self, room: Any, value: dict[str, Any]) -> None:
        room.__dict__["rules"] = value if type(value) is RoomRules else RoomRules(value)


@dataclass
class Seat:
    id: str
    name: str
    bot: str | None = None  # bot level, or None for a human
    token_hash: str | None = None
    connected: bool = False
    dropped_at: int | None = None  # when a human's socket dropped (reconnect grace runs)
    node: str | None = None  # the server process holding the socket
    joined_from: str | None = None  # the joiner's address, hashed (codes.address_key)
    away: bool = False  # past the reconnect grace: the bot plays until the player says hello
    joined_ms: int = 0  # when they came into the room (who has sat longest: presence.settle_host)


@dataclass
class Spectator:
    id: str
    name: str
    token_hash: str
    connected: bool = False
    dropped_at: int | None = None  # when the socket dropped (a return is announced)
    node: str | None = None  # the server process holding the socket
    joined_from: str | None = None  # the joiner's address, hashed (codes.address_key)
    screen: bool = False  # a big screen (/tv/CODE): watches only, never takes a seat or hosts
    joined_ms: int = 0  # when they came into the room (kept when they take a seat)


def _known(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    """``d`` without the fields ``cls`` does not have: a room written by a newer process (a
    rolling upgrade, processes of two versions on one Redis) still loads here."""
    fields = cls.__dataclass_fields__  # type: ignore[attr-defined]
    if d.keys() <= fields.keys():
        return d
    return {k: v for k, v in d.items() if k in fields}


@dataclass
class Room:
    code: str
    version: int
    host: str
    created_ms: int
    rules: RoomRules = _RulesField()  # type: ignore[assignment]  # a required field: see _RulesField
    seats: list[Seat]
    spectators: list[Spectator] = field(default_factory=list)
    status: str = LOBBY
    round: int = 0
    scores: dict[str, int] = field(default_factory=dict)
    dealer: int | None = None
    game: dict[str, Any] | None = None  # engine GameState.to_dict() (see game_part)
    # engine Record.to_dict() of the round in play, without its steps: they grow with every
    # action, so they live in a Redis list of their own that each commit appends to; and
    # without its rules, which are the room's while it plays (they change only in the lobby)
    record: dict[str, Any] | None = None
    bot_due: int | None = None  # when bots may act next
    last_reaction: dict[str, int] = field(default_factory=dict)
    updated_ms: int = 0
    finished_rounds: list[dict[str, Any]] = field(default_factory=list)  # records awaiting the database
    match: int = 0  # matches started in this room (a match runs until someone reaches the target)
    match_open: bool = False  # back in the lobby mid-match: ``start`` deals the match's next round
    locked: bool = False  # no new joiners (the host's choice)
    barred: list[str] = field(default_factory=list)  # names and addresses the host removed
    # seats removed after a round (id -> name): the finished round on the table still names them
    gone: dict[str, str] = field(default_factory=dict)
    # protocol.md "The host": the creator hosts, and takes the role back on return; while they
    # are away past the reconnect grace, a stand-in who had joined before ``host_lost_ms`` (when
    # the creator dropped) holds it. None in an older document: its host is its creator
    creator: str | None = None
    host_lost_ms: int | None = None
    # someone said hello: a room nobody ever opened expires after UNCLAIMED_ROOM_TTL_MS and is
    # not counted against MAX_ROOMS (older documents were all opened)
    claimed: bool = True
    # whose decision the game waits for, and since when: a disconnected player's turn passes to
    # their seat's bot AWAY_TURN_GRACE_MS after it came to them (timers.schedule keeps both)
    turn_of: str | None = None
    turn_since: int = 0
    # a finished round's deal another room shared, chosen by the host in the lobby (``use_deal``,
    # app/rooms/deals.py): the next ``start`` deals from it. Its seed never reaches a view
    deal: dict[str, Any] | None = None
    # quick chat (app/rooms/chat.py): who the host muted, and when each player last chatted (its
    # rate limit); older documents have neither and load with none
    muted: list[str] = field(default_factory=list)
    last_chat: dict[str, int] = field(default_factory=dict)
    # the host ended the night after a round (app/rooms/night.py); the next deal clears it
    night_over: bool = False

    # -- lookups ------------------------------------------------------------------------------

    def seat(self, player_id: str) -> Seat | None:
        for s in self.seats:
            if s.id == player_id:
                return s
        return None

    def spectator(self, player_id: str) -> Spectator | None:
        for s in self.spectators:
            if s.id == player_id:
                return s
        return None

    def member_by_token(self, digest: str) -> Seat | Spectator | None:
        for s in self.seats:
            if s.token_hash is not None and s.token_hash == digest:
                return s
        for sp in self.spectators:
            if sp.token_hash == digest:
                return sp
        return None

    def humans(self) -> list[Seat]:
        return [s for s in self.seats if s.bot is None]

    def held_elsewhere(self, node_id: str) -> set[str]:
        """Members whose socket is held by another server process than ``node_id``."""
        return self.members_and_elsewhere(node_id)[1]

    def members_and_elsewhere(self, node_id: str) -> tuple[set[str], set[str]]:
        """Every member's id, and ``held_elsewhere``'s, in one pass: the fan-out asks on every
        commit."""
        members: set[str] = set()
        elsewhere: set[str] = set()
        for group in (self.seats, self.spectators):
            for m in group:
                members.add(m.id)
                if m.connected and m.node is not None and m.node != node_id:
                    elsewhere.add(m.id)
        return members, elsewhere

    def table(self) -> dict[str, SeatInfo]:
        seated = {s.id: SeatInfo(s.name, s.bot is not None, s.connected or s.bot is not None, s.bot,
                                 personas.hue(s.id, s.name), s.away) for s in self.seats}
        if self.gone:
            for pid, name in self.gone.items():
                seated.setdefault(pid, SeatInfo(name, False, False, None, personas.hue(pid, name)))
        return seated

    # -- serialisation ------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def document(self) -> bytes:
        """The room as Redis holds it (JSON), its rules as ``RoomRules.stored_json`` makes them."""
        if _only_fields(self):
            # these classes have no slots: orjson writes such a dataclass from its
            # ``__dict__``, ~3x faster than field by field (~10 us a commit), which is
            # why an attribute that is no field must not reach it
            return orjson.dumps(self, default=_stored, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
        log.warning("attributes that are no fields are not stored: %s", _strays(self),
                    extra={"room": self.code})
        return orjson.dumps(_fields_of(self), default=_stored, option=orjson.OPT_PASSTHROUGH_SUBCLASS)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Room:
        d = dict(d)
        if "deck" not in d["rules"]:  # written by document(): the standard deck
            d["rules"] = {**d["rules"], "deck": dict(STANDARD_DECK)}
        if d.get("creator") is None:
            d["creator"] = d["host"]
        d["seats"] = [Seat(**_known(Seat, s)) for s in d["seats"]]
        d["spectators"] = [Spectator(**_known(Spectator, s)) for s in d["spectators"]]
        game = d.get("game")
        if game is not None and "rules" not in game:  # written by game_part
            d["game"] = {**game, "rules": d["rules"]}
        return cls(**_known(cls, d))

    def record_rules(self) -> dict[str, Any]:
        """The rules of the round in ``record`` (a record written before they moved out holds
        its own)."""
        assert self.record is not None
        return self.record.get("rules", self.rules)


_ROOM_FIELDS = tuple(f.name for f in fields(Room))
_SEAT_FIELDS = tuple(f.name for f in fields(Seat))
_SPECTATOR_FIELDS = tuple(f.name for f in fields(Spectator))
_SEAT_COUNT, _SPECTATOR_COUNT = len(_SEAT_FIELDS), len(_SPECTATOR_FIELDS)


def _only_fields(room: Room) -> bool:
    """Nothing but dataclass fields is set on ``room`` and its members (a count suffices:
    every field is set by ``__init__``)."""
    if len(room.__dict__) != len(_ROOM_FIELDS):
        return False
    for member in room.seats:
        if len(member.__dict__) != _SEAT_COUNT:
            return False
    return all(len(member.__dict__) == _SPECTATOR_COUNT for member in room.spectators)


def _strays(room: Room) -> list[str]:
    members = [(room, _ROOM_FIELDS), *((s, _SEAT_FIELDS) for s in room.seats),
               *((s, _SPECTATOR_FIELDS) for s in room.spectators)]
    return sorted({f"{type(m).__name__}.{name}" for m, names in members for name in m.__dict__
                   if name not in names})


def _fields_of(room: Room) -> dict[str, Any]:
    out = {name: getattr(room, name) for name in _ROOM_FIELDS}
    out["seats"] = [{name: getattr(s, name) for name in _SEAT_FIELDS} for s in room.seats]
    out["spectators"] = [{name: getattr(s, name) for name in _SPECTATOR_FIELDS} for s in room.spectators]
    return out


def _stored(value: Any) -> Any:
    """What a room document holds for a subclass of a JSON type: the rules' own stored JSON,
    the plain value of anything else (an enum member's)."""
    if type(value) is RoomRules:
        return value.stored_json()
    for base in (str, int, float, dict, list):
        if isinstance(value, base):
            return base(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def game_part(game: GameState, rules: dict[str, Any]) -> dict[str, Any]:
    """``game`` as the room document holds it: its rules left out when they are the room's
    (``Room.from_dict`` puts them back). They are a third of the document otherwise, which
    every commit writes and every other process holding the room's sockets parses."""
    part = game.to_dict()
    if rules.equal_to(part["rules"]) if type(rules) is RoomRules else part["rules"] == rules:
        del part["rules"]
    return part


class Loaded:
    """A room with its engine state deserialised once (the actor keeps this between actions).

    ``steps`` are the record steps applied since the last commit (the commit appends them to
    the round's list in Redis); ``new_round`` says the list starts again with this commit."""

    __slots__ = ("game", "new_round", "room", "steps")

    def __init__(self, room: Room, game: GameState | None = None) -> None:
        self.room = room
        self.game = game if game is not None else (
            GameState.from_dict(room.game) if room.game is not None else None)
        self.steps: list[list[Any]] = []
        self.new_round = False
        if room.record is not None and "steps" in room.record:
            # a document written before the steps moved out (a deploy mid-round): the next
            # commit starts the list with them
            self.steps = list(room.record.pop("steps"))
            self.new_round = True


def room_part(room: Room) -> dict[str, Any]:
    return {
        "code": room.code,
        "host": room.host,
        "status": room.status,
        "rules": room.rules,  # validated and complete since the room was made
        "round": room.round,
        "match": room.match,  # the room's match counter (the night's record numbers them so)
        "locked": room.locked,
        **({"deal": {"id": room.deal["id"], "seats": room.deal["seats"]}} if room.deal is not None else {}),
        "removed": sum(key.startswith("n:") for key in room.barred),  # players barred from joining
        "muted": list(room.muted),  # whose quick chat the host muted (app/rooms/chat.py)
        **({"night_over": True} if room.night_over else {}),  # the host ended the night
        # a big screen is marked; a person watching has the fields spectators always had
        "spectators": [{"id": s.id, "name": s.name, "connected": s.connected, "screen": True}
                       if s.screen else {"id": s.id, "name": s.name, "connected": s.connected}
                       for s in room.spectators],
    }


def lobby_players(room: Room) -> list[dict[str, Any]]:
    return [{"id": s.id, "name": s.name, "bot": s.bot is not None,
             "connected": s.connected or s.bot is not None, "cards": 0, "eliminated": False,
             "uno": False, "score": room.scores.get(s.id, 0), "level": s.bot,
             "hue": personas.hue(s.id, s.name), "away": s.away} for s in room.seats]


def room_views(loaded: Loaded, viewers: Iterable[str], now_ms: int | None = None
               ) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
    """protocol.md VIEW for each viewer (seated players and spectators), built at once, and
    the public ``game`` of ``engine.table_views`` they were built from (None in the lobby): the
    parts every viewer sees are one shared object, so the fan-out's differ meets them once.
    Views are read-only."""
    room = loaded.room
    part = room_part(room)
    game = loaded.game
    if game is None or room.status == LOBBY:
        lobby = {"room": part, "players": lobby_players(room), "hand": [], "game": None}
        return None, dict.fromkeys(viewers, lobby)
    # a spectator: no seat, no hand; the table gives each players entry its bot's level
    return table_views(game, viewers, room.table(), now_ms, {"room": part})


def summary(room: Room) -> dict[str, Any]:
    """``GET /api/rooms/{code}``: public, never a card."""
    return {
        "code": room.code,
        "status": room.status,
        "round": room.round,
        "host": room.host,
        "seats": [{"id": s.id, "name": s.name, "bot": s.bot is not None, "level": s.bot,
                   "hue": personas.hue(s.id, s.name), "connected": s.connected or s.bot is not None}
                  for s in room.seats],
        "spectators": len(room.spectators),
        "rules": make_rules(room.rules).to_dict(),
    }
