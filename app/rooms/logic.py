"""What each intent does to a room: pure functions on a :class:`~app.rooms.model.Loaded` room.

Each function checks everything first and raises :class:`Refused` (nothing changed) or changes
the room and returns the events to announce. The actor commits the result; if the commit loses a
race it reloads and runs the intent again, so these functions never touch Redis or sockets.
"""

from __future__ import annotations

import secrets
from typing import Any

from app.core.codes import new_player_id, new_token, token_hash
from app.core.protocol import BOT_LEVELS, REACTIONS, Err
from app.rooms.model import (
    LOBBY,
    MATCH_OVER,
    MAX_SEATS,
    PLAYING,
    ROUND_OVER,
    STEPS_MARK,
    Loaded,
    Room,
    Seat,
    Spectator,
)
from engine import (
    Action,
    ActionKind,
    Event,
    EventKind,
    IllegalAction,
    Record,
    RulesError,
    apply,
    make_rules,
    new_game,
)
from engine.mechanics import match_won


class NoChange(Exception):
    """The intent asks for what already is (a second hello of a connected player): no commit."""


class Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message


def _event(kind: EventKind, **data: Any) -> Event:
    return Event(kind, data)


# -- creating and joining ---------------------------------------------------------------------

def new_room(code: str, name: str, rules: dict[str, Any], now_ms: int) -> tuple[Room, str, str]:
    """A room with its creator as host in seat 0; returns (room, player id, token)."""
    try:
        checked = make_rules(rules)
    except RulesError as exc:
        raise Refused(Err.BAD_RULES, exc.message) from None
    pid, token = new_player_id(), new_token()
    seat = Seat(pid, name, None, token_hash(token))
    room = Room(code=code, version=0, host=pid, created_ms=now_ms, rules=checked.to_dict(),
                seats=[seat], updated_ms=now_ms)
    return room, pid, token


def join(loaded: Loaded, name: str) -> tuple[str, str, bool, list[Event]]:
    """Seat a newcomer (or make them a spectator while a round is in play)."""
    room = loaded.room
    pid, token = new_player_id(), new_token()
    spectator = room.status == PLAYING
    if spectator:
        room.spectators.append(Spectator(pid, name, token_hash(token)))
    elif len(room.seats) >= MAX_SEATS:
        raise Refused(Err.ROOM_FULL, "every seat is taken")
    else:
        room.seats.append(Seat(pid, name, None, token_hash(token)))
    if not _has_host(room):  # every human had left: the newcomer runs the room
        room.host = pid
    return pid, token, spectator, [_event(EventKind.JOINED, player=pid, name=name, spectator=spectator)]


# -- lobby ------------------------------------------------------------------------------------

def _verify_host_in_lobby(room: Room, player: str) -> None:
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can do that")
    if room.status != LOBBY:
        raise Refused(Err.NOT_IN_LOBBY, "only in the lobby")


def set_rules(loaded: Loaded, player: str, rules: dict[str, Any]) -> list[Event]:
    room = loaded.room
    _verify_host_in_lobby(room, player)
    try:
        checked = make_rules(rules, base=make_rules(room.rules))
    except RulesError as exc:
        raise Refused(Err.BAD_RULES, exc.message) from None
    room.rules = checked.to_dict()
    return [_event(EventKind.RULES_CHANGED, rules=room.rules)]


def add_bot(loaded: Loaded, player: str, level: str) -> list[Event]:
    room = loaded.room
    _verify_host_in_lobby(room, player)
    if level not in BOT_LEVELS:
        raise Refused(Err.BAD_LEVEL, f"level must be one of {', '.join(BOT_LEVELS)}")
    if len(room.seats) >= MAX_SEATS:
        raise Refused(Err.ROOM_FULL, "every seat is taken")
    taken = {s.name for s in room.seats}
    n = 1
    while f"Bot {n}" in taken:
        n += 1
    pid = new_player_id(bot=True)
    room.seats.append(Seat(pid, f"Bot {n}", level, None, True))
    return [_event(EventKind.BOT_ADDED, player=pid, name=f"Bot {n}", level=level)]


def remove_seat(loaded: Loaded, player: str, target: str) -> list[Event]:
    room = loaded.room
    _verify_host_in_lobby(room, player)
    seat = room.seat(target)
    if seat is None or target == room.host:
        raise Refused(Err.BAD_MESSAGE, "no such seat to remove")
    room.seats.remove(seat)
    room.scores.pop(target, None)
    return [_event(EventKind.LEFT, player=target, removed=True)]


def start(loaded: Loaded, player: str, now_ms: int) -> list[Event]:
    room = loaded.room
    _verify_host_in_lobby(room, player)
    if len(room.seats) < 2:
        raise Refused(Err.NOT_ENOUGH_PLAYERS, "a round needs at least two seats")
    room.round = 0
    room.match += 1
    room.scores = {s.id: 0 for s in room.seats}
    return _deal(loaded, dealer=len(room.seats) - 1, now_ms=now_ms)


def rematch(loaded: Loaded, player: str, now_ms: int) -> list[Event]:
    room = loaded.room
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can start a rematch")
    if room.status not in (ROUND_OVER, MATCH_OVER):
        raise Refused(Err.NOT_OVER, "the round is still in play")
    events: list[Event] = []
    # spectators take free seats; eliminated players are dealt in again
    while room.spectators and len(room.seats) < MAX_SEATS:
        sp = room.spectators.pop(0)
        room.seats.append(Seat(sp.id, sp.name, None, sp.token_hash, sp.connected, sp.dropped_at, sp.node))
        events.append(_event(EventKind.JOINED, player=sp.id, name=sp.name, spectator=False))
    if room.status == MATCH_OVER:
        room.scores = {}
        room.match += 1
    room.scores = {s.id: room.scores.get(s.id, 0) for s in room.seats}
    dealer = ((room.dealer if room.dealer is not None else -1) + 1) % len(room.seats)
    return events + _deal(loaded, dealer=dealer, now_ms=now_ms)


def _deal(loaded: Loaded, dealer: int, now_ms: int) -> list[Event]:
    room = loaded.room
    rules = make_rules(room.rules)
    players = [s.id for s in room.seats]
    if not rules.can_deal(len(players)):
        raise Refused(Err.BAD_RULES, "deck: too few cards to deal every hand")
    for seat in room.seats:  # a human not here when the cards are dealt has the reconnect grace
        if seat.bot is None and not seat.connected:  # the grace starts with the round
            seat.dropped_at = now_ms
    seed = secrets.token_hex(16)
    scores = [room.scores.get(p, 0) for p in players]
    state, events = new_game(players, rules, seed, dealer=dealer, scores=scores, now_ms=now_ms)
    loaded.game = state
    room.record = Record(tuple(players), room.rules, seed, dealer, tuple(scores), now_ms).to_dict()
    del room.record["steps"]  # kept in Redis beside the room (see Loaded)
    del room.record["rules"]  # the room's while the round plays (see Room.record)
    loaded.steps, loaded.new_round = [], True
    room.round += 1
    room.dealer = dealer
    room.status = PLAYING
    started = [e for e in events if e.kind is EventKind.STARTED]
    for e in started:
        e.data["round"] = room.round
    if state.winner is not None:  # over at the deal (a first card's draw hit the mercy limit)
        _round_finished(loaded, now_ms)
    return list(events)


# -- playing ----------------------------------------------------------------------------------

def game_action(loaded: Loaded, player: str | None, action: Action, now_ms: int,
                msg_id: str | None = None) -> list[Event]:
    """Hand a game action to the engine; a round that ends moves the room on. The record keeps
    the id of the message that asked for it (an audit trail: every id applies once)."""
    room = loaded.room
    if loaded.game is None or room.status == LOBBY:
        raise Refused(Err.NOT_STARTED, "no round in play")
    if room.status != PLAYING:
        raise Refused(Err.GAME_OVER, "the round is over")
    if player is not None and room.seat(player) is None:
        raise Refused(Err.SPECTATOR, "spectators watch; they play from the next rematch")
    try:
        state, events = apply(loaded.game, player, action, now_ms)
    except IllegalAction as exc:
        raise Refused(exc.code.value, exc.message) from None
    loaded.game = state
    assert room.record is not None
    step: list[Any] = [player, action.to_wire(), now_ms]
    if msg_id is not None:
        step.append(msg_id)
    loaded.steps.append(step)
    if state.winner is not None:
        _round_finished(loaded, now_ms)
    return list(events)


def _round_finished(loaded: Loaded, now_ms: int) -> None:
    room = loaded.room
    state = loaded.game
    assert state is not None and room.record is not None
    room.scores = dict(zip(state.players, state.scores, strict=True))
    over = match_won(state)
    room.status = MATCH_OVER if over else ROUND_OVER
    record = room.record
    seats = []
    for i, pid in enumerate(state.players):
        seat = room.seat(pid)
        seats.append({"seat": i, "player_id": pid, "name": seat.name if seat else pid,
                      "bot_level": seat.bot if seat else None, "final_cards": len(state.hands[i]),
                      "eliminated": state.eliminated[i], "score_after": state.scores[i]})
    # what the history writer stores once the database has it (see app/history.py)
    room.finished_rounds.append({
        "uid": f"{room.code}:{room.round}:{record['start_ms']}", "match": room.match,
        # the commit script puts the round's steps where the mark is (they are in Redis)
        "round": room.round, "record": {**record, "rules": room.record_rules(), "steps": STEPS_MARK},
        "ended_ms": now_ms,
        "match_over": over,
        "winner": state.players[state.winner] if state.winner is not None else None,
        "reason": state.end_reason, "points": state.points, "seats": seats})


def leave(loaded: Loaded, player: str) -> list[Event]:
    room = loaded.room
    sp = room.spectator(player)
    if sp is not None:
        room.spectators.remove(sp)
        if room.host == player:
            _pass_host(room)
        return [_event(EventKind.LEFT, player=player)]
    seat = room.seat(player)
    if seat is None:
        raise Refused(Err.BAD_MESSAGE, "not in this room")
    events = [_event(EventKind.LEFT, player=player)]
    if room.status == LOBBY:
        room.seats.remove(seat)
        room.scores.pop(player, None)
    else:
        seat.bot, seat.token_hash, seat.connected, seat.dropped_at, seat.node = "easy", None, True, None, None
        events.append(_event(EventKind.REPLACED_BY_BOT, player=player))
    if room.host == player:
        _pass_host(room)
    return events


def _has_host(room: Room) -> bool:
    """The host is still a human in the room (a seat handed to a bot is not)."""
    seat = room.seat(room.host)
    return seat.bot is None if seat is not None else room.spectator(room.host) is not None


def _pass_host(room: Room) -> None:
    humans = [s for s in room.seats if s.bot is None]
    if humans:
        room.host = humans[0].id
    elif room.spectators:
        room.host = room.spectators[0].id


def react(loaded: Loaded, player: str, reaction: str, now_ms: int, interval_ms: int) -> list[Event]:
    room = loaded.room
    if reaction not in REACTIONS:
        raise Refused(Err.BAD_REACTION, f"reaction must be one of {', '.join(REACTIONS)}")
    last = room.last_reaction.get(player)
    if last is not None and now_ms - last < interval_ms:
        raise Refused(Err.RATE_LIMITED, "one reaction a second")
    room.last_reaction[player] = now_ms
    return [_event(EventKind.REACTION, player=player, reaction=reaction)]


# -- presence ---------------------------------------------------------------------------------

def connected(loaded: Loaded, player: str, node: str | None = None) -> list[Event]:
    """``player``'s socket said hello on server process ``node``."""
    room = loaded.room
    member = room.seat(player) or room.spectator(player)
    if member is None or (member.connected and member.node == node):
        raise NoChange
    was_dropped = member.dropped_at is not None
    member.connected = True
    member.dropped_at = None
    member.node = node  # a socket on another process is replaced (it closes with 4409)
    return [_event(EventKind.RECONNECTED, player=player)] if was_dropped else []


def disconnected(loaded: Loaded, player: str, now_ms: int, node: str | None = None) -> list[Event]:
    """``player``'s socket on ``node`` closed (nothing changes if they are on another one)."""
    room = loaded.room
    member = room.seat(player) or room.spectator(player)
    if member is None or not member.connected or (isinstance(member, Seat) and member.bot):
        raise NoChange
    if node is not None and member.node is not None and member.node != node:
        raise NoChange  # the player said hello on another process since
    member.connected = False
    member.dropped_at = now_ms
    member.node = None
    return [_event(EventKind.DISCONNECTED, player=player)]


def node_lost(loaded: Loaded, node: str, now_ms: int) -> list[Event]:
    """Server process ``node`` stopped beating (killed): the players whose sockets it held are
    disconnected, so their reconnect grace starts, as if each socket had closed."""
    room = loaded.room
    events: list[Event] = []
    for member in [*room.seats, *room.spectators]:
        if member.connected and member.node == node:
            events += disconnected(loaded, member.id, now_ms, node)
    if not events:
        raise NoChange
    return events


def replace_by_bot(loaded: Loaded, seat: Seat) -> list[Event]:
    """Reconnect grace ran out: a bot plays the seat for the rest of the match."""
    room = loaded.room
    seat.bot, seat.token_hash, seat.connected, seat.dropped_at, seat.node = "easy", None, True, None, None
    if room.host == seat.id:
        _pass_host(room)
    return [_event(EventKind.REPLACED_BY_BOT, player=seat.id)]


def to_action(msg: Any) -> Action:
    """A validated protocol message as an engine action (its fields were checked at the edge:
    built directly, not through ``model_dump`` and ``Action.from_wire``, ~3x the cost)."""
    fields = msg.__dict__  # a pydantic model's values: getattr of a field a type lacks raises inside
    return Action(ActionKind(msg.type), fields.get("card"), fields.get("color"), fields.get("target"),
                  fields.get("top"), fields.get("uno", False))


SYSTEM = {"expire": Action(ActionKind.EXPIRE), "timeout": Action(ActionKind.TIMEOUT),
          "resolve": Action(ActionKind.RESOLVE)}
