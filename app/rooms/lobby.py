"""What the room's own commands do: creating and joining a room, the host's lobby commands,
starting and rematching, leaving, reactions (protocol.md "Client -> server").

Each function checks everything first and raises :class:`~app.rooms.outcomes.Refused` (nothing
changed) or changes the room and returns the events to announce. The actor commits the result;
if the commit loses a race it reloads and runs the command again, so these functions never
touch Redis or sockets.
"""

from __future__ import annotations

import secrets
from typing import Any

from app.core.codes import address_key, name_key, new_player_id, new_token, token_hash
from app.core.protocol import REACTIONS, Err
from app.rooms import personas
from app.rooms.events import RoomEventKind, room_event
from app.rooms.model import (
    LOBBY,
    MATCH_OVER,
    MAX_SEATS,
    PLAYING,
    ROUND_OVER,
    Loaded,
    Room,
    Seat,
    Spectator,
)
from app.rooms.outcomes import NoChange, Refused
from app.rooms.play import round_finished
from app.rooms.presence import hand_to_bot, settle_host
from engine import BOT_LEVELS, Event, EventKind, Record, RulesError, make_rules, new_game


def new_room(code: str, name: str, rules: dict[str, Any], now_ms: int,
             address: str | None = None) -> tuple[Room, str, str]:
    """A room with its creator (from ``address``) as host in seat 0; returns (room, player id,
    token)."""
    try:
        checked = make_rules(rules)
    except RulesError as exc:
        raise Refused(Err.BAD_RULES, exc.message) from None
    pid, token = new_player_id(), new_token()
    seat = Seat(pid, name, None, token_hash(token),
                joined_from=address_key(code, address) if address is not None else None, joined_ms=now_ms)
    room = Room(code=code, version=0, host=pid, created_ms=now_ms, rules=checked.to_dict(),
                seats=[seat], updated_ms=now_ms, creator=pid, claimed=False)
    return room, pid, token


def join(loaded: Loaded, name: str, address: str | None = None, max_spectators: int = 30,
         screen: bool = False, now_ms: int = 0,
         screen_token: str | None = None, watch: bool = False) -> tuple[str, str, bool, list[Event]]:
    """Seat a newcomer (or make them a spectator while a round is in play or over, up to
    ``max_spectators``), unless the host locked the room or removed someone of that name, or
    from that address, earlier. Names are unique in a room, in look-alike letters too
    (protocol.md "Names": ``name_taken``). A ``screen`` (the big-screen view, /tv/CODE) is a
    spectator at any time: it never takes a seat and never runs the room; it is barred by its
    own token (``screen_token``, the one it held before), never by a name or an address, and
    is named "TV", "TV 2" ... as the names free allow. A person who asks to ``watch`` (a full
    room offers it) is a spectator in the lobby too, with a join's checks, and takes a seat that
    frees as waiting spectators do."""
    room = loaded.room
    if room.locked:
        raise Refused(Err.ROOM_LOCKED, "the host has locked this room")
    if screen:
        if screen_token is not None and _token_bar(token_hash(screen_token)) in room.barred:
            raise Refused(Err.BARRED, "the host removed this screen from the room")
        name = _free_name(room, name)
    else:
        where = address_key(room.code, address) if address is not None else None
        if name_key(name) in room.barred or (where is not None and where in room.barred):
            raise Refused(Err.BARRED, "the host removed you from this room")
        if name_key(name) in _names(room):
            raise Refused(Err.NAME_TAKEN, f"someone in this room is already called {name}: pick another name")
    pid, token = new_player_id(), new_token()
    # while a round plays, and after it until ``lobby`` or ``rematch`` seats the waiting: the
    # view's players are the round's, and a seat taken then was in no list anyone saw
    spectator = screen or watch or room.status != LOBBY
    if spectator:
        if len(room.spectators) >= max_spectators:
            raise Refused(Err.ROOM_FULL, "no more spectators fit in this room")
        room.spectators.append(Spectator(pid, name, token_hash(token), joined_from=None if screen else where,
                                         screen=screen, joined_ms=now_ms))
    elif len(room.seats) >= MAX_SEATS:
        raise Refused(Err.ROOM_FULL, "every seat is taken")
    else:
        room.seats.append(Seat(pid, name, None, token_hash(token), joined_from=where, joined_ms=now_ms))
    if not screen:
        settle_host(room)  # a room every human had left is the newcomer's to run
    joined = room_event(RoomEventKind.JOINED, player=pid, name=name, spectator=spectator)
    if screen:
        joined.data["screen"] = True
    return pid, token, spectator, [joined]


def _names(room: Room) -> set[str]:
    """Every member's name as names are compared (bots and screens too)."""
    return {name_key(m.name) for m in (*room.seats, *room.spectators)}


def _free_name(room: Room, name: str) -> str:
    taken = _names(room)
    for n in range(1, MAX_SEATS + 64):
        candidate = name if n == 1 else f"{name[:20]} {n}"
        if name_key(candidate) not in taken:
            return candidate
    raise Refused(Err.ROOM_FULL, "no more screens fit in this room")


def _token_bar(digest: str) -> str:
    return "t:" + digest


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
    return [room_event(RoomEventKind.RULES_CHANGED, rules=room.rules)]


def add_bot(loaded: Loaded, player: str, level: str) -> list[Event]:
    room = loaded.room
    _verify_host_in_lobby(room, player)
    if level not in BOT_LEVELS:
        raise Refused(Err.BAD_LEVEL, f"level must be one of {', '.join(BOT_LEVELS)}")
    if len(room.seats) >= MAX_SEATS:
        raise Refused(Err.ROOM_FULL, "every seat is taken")
    name = personas.pick_name(room.code, [m.name for m in (*room.seats, *room.spectators)],
                              [(s.id, s.name) for s in room.seats])
    pid = new_player_id(bot=True)
    room.seats.append(Seat(pid, name, level, None, True))
    return [room_event(RoomEventKind.BOT_ADDED, player=pid, name=name, level=level)]


def set_bot(loaded: Loaded, player: str, target: str, level: str) -> list[Event]:
    """The host changes a bot's level, in the lobby or between rounds (as seats are removed):
    the next round's bot plays at the new level. A seat a bot only stands in for (its player
    is away, and takes it back with a hello) is no bot to set."""
    room = loaded.room
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can do that")
    seat = room.seat(target)
    if seat is None or seat.bot is None or seat.away:
        raise Refused(Err.NOT_A_BOT, "no bot in that seat")
    if level not in BOT_LEVELS:
        raise Refused(Err.BAD_LEVEL, f"level must be one of {', '.join(BOT_LEVELS)}")
    if room.status == PLAYING:
        raise Refused(Err.NOT_IN_LOBBY, "a bot's level changes between rounds")
    if seat.bot == level:
        raise NoChange
    seat.bot = level
    return [room_event(RoomEventKind.BOT_LEVEL, player=target, level=level, by=player)]


def remove_seat(loaded: Loaded, player: str, target: str) -> list[Event]:
    """The host removes a seat between rounds (a bot, or a human), or a spectator at any time.
    A removed human is barred: their name and the address they joined from cannot join the
    room again unless the host readmits them (``set_room``); a removed screen, by its token."""
    room = loaded.room
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can do that")
    if target == room.host:  # a host watching too: ``leave`` passes the room on
        raise Refused(Err.BAD_MESSAGE, "the host cannot remove themselves: leave passes the room on")
    member: Seat | Spectator | None = room.spectator(target)
    if member is not None:
        room.spectators.remove(member)
    else:
        member = room.seat(target)
        if member is None:
            raise Refused(Err.BAD_MESSAGE, "no such seat to remove")
        if room.status == PLAYING:
            raise Refused(Err.NOT_IN_LOBBY, "seats are removed between rounds")
        room.seats.remove(member)
        room.scores.pop(target, None)
        room.gone[member.id] = member.name  # the finished round on the table still names them
    if not (isinstance(member, Seat) and member.bot and not member.away):
        # a screen by its own token: by its name ("TV") or its address (often the host's own,
        # on the same Wi-Fi) would shut out every other screen, or none
        bars = [_token_bar(member.token_hash)] if isinstance(member, Spectator) and member.screen else []
        if not bars:
            bars.append(name_key(member.name))
            # the address too, unless it is the host's own: friends at the host's home share it
            host = room.seat(room.host) or room.spectator(room.host)
            if member.joined_from is not None and (host is None or member.joined_from != host.joined_from):
                bars.append(member.joined_from)
        room.barred.extend(b for b in bars if b not in room.barred)
    return [room_event(RoomEventKind.LEFT, player=target, removed=True, by=player)]


def set_room(loaded: Loaded, player: str, locked: bool | None, readmit: bool) -> list[Event]:
    """The host locks the room (no new joiners) or unlocks it, and may readmit the players
    removed so far."""
    room = loaded.room
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can do that")
    if (locked is None or locked == room.locked) and not (readmit and room.barred):
        raise NoChange  # acknowledged; nothing to commit or send
    if locked is not None:
        room.locked = locked
    if readmit:
        room.barred = []
    return [room_event(RoomEventKind.ROOM_CHANGED, locked=room.locked, readmitted=readmit, by=player)]


def back_to_lobby(loaded: Loaded, player: str) -> list[Event]:
    """protocol.md ``lobby``: after a round, the host takes the room back to the lobby with
    seats, bots and scores kept, so rules, bots and seats can change; waiting spectators take
    free seats. ``start`` then deals the next round of the same match (after the match is
    over, the first round of a new one)."""
    room = loaded.room
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can do that")
    if room.status not in (ROUND_OVER, MATCH_OVER):
        raise Refused(Err.NOT_OVER, "the round is still in play")
    events = _seat_spectators(room)
    room.match_open = room.status == ROUND_OVER
    room.status = LOBBY
    loaded.game = None
    room.gone = {}
    return [*events, room_event(RoomEventKind.LOBBY, player=player)]


def _seat_spectators(room: Room) -> list[Event]:
    """Waiting spectators take the free seats, in the order they came."""
    events: list[Event] = []
    for sp in [s for s in room.spectators if not s.screen]:
        if len(room.seats) >= MAX_SEATS:
            break
        room.spectators.remove(sp)
        room.seats.append(Seat(sp.id, sp.name, None, sp.token_hash, sp.connected, sp.dropped_at, sp.node,
                               sp.joined_from, joined_ms=sp.joined_ms))
        events.append(room_event(RoomEventKind.JOINED, player=sp.id, name=sp.name, spectator=False))
    return events


def _verify_can_deal(room: Room) -> None:
    """Two seats at least once the waiting spectators (screens aside) take the free ones (seats
    are removed between rounds, so a ``rematch`` may find one or none left), and the deck
    deals them all. Checked before anything changes: a refused ``start`` or ``rematch``
    changes nothing (protocol.md), where it once seated the spectators and then refused."""
    waiting = sum(not s.screen for s in room.spectators)
    seats = len(room.seats) + min(waiting, MAX_SEATS - len(room.seats))
    if seats < 2:
        raise Refused(Err.NOT_ENOUGH_PLAYERS, "a round needs at least two seats")
    if not make_rules(room.rules).can_deal(seats):
        raise Refused(Err.BAD_RULES, "deck: too few cards to deal every hand")


def start(loaded: Loaded, player: str, now_ms: int) -> list[Event]:
    room = loaded.room
    _verify_host_in_lobby(room, player)
    _verify_can_deal(room)
    events = _seat_spectators(room)  # a seat freed in the lobby goes to whoever waited for one
    if room.match_open:  # back from a round of this match: its next round
        room.match_open = False
        return events + _next_round(loaded, now_ms)
    room.round = 0
    room.match += 1
    room.scores = {s.id: 0 for s in room.seats}
    return events + _deal(loaded, dealer=len(room.seats) - 1, now_ms=now_ms)


def rematch(loaded: Loaded, player: str, now_ms: int) -> list[Event]:
    room = loaded.room
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can start a rematch")
    if room.status not in (ROUND_OVER, MATCH_OVER):
        raise Refused(Err.NOT_OVER, "the round is still in play")
    _verify_can_deal(room)
    # spectators take free seats; eliminated players are dealt in again
    events = _seat_spectators(room)
    if room.status == MATCH_OVER:  # a new match: its rounds counted from 1, as start's
        room.scores = {}
        room.match += 1
        room.round = 0
    return events + _next_round(loaded, now_ms)


def _next_round(loaded: Loaded, now_ms: int) -> list[Event]:
    """Deal the match's next round: the scores carry on (a new seat starts at 0), the deal
    passes to the left."""
    room = loaded.room
    room.scores = {s.id: room.scores.get(s.id, 0) for s in room.seats}
    dealer = ((room.dealer if room.dealer is not None else -1) + 1) % len(room.seats)
    return _deal(loaded, dealer=dealer, now_ms=now_ms)


def _deal(loaded: Loaded, dealer: int, now_ms: int, seed: str | None = None,
          replayed_from: dict[str, Any] | None = None) -> list[Event]:
    """Deal the next round from a new random seed, or from ``seed``: a finished round's deal
    played again (app/rooms/deals.py; ``replayed_from`` names that round in the record)."""
    room = loaded.room
    room.night_over = False  # a round after the night's end: the night goes on
    rules = make_rules(room.rules)
    players = [s.id for s in room.seats]  # (start and rematch checked the deck deals them)
    for seat in room.seats:  # a human not here when the cards are dealt has the reconnect grace
        if seat.bot is None and not seat.connected:  # the grace starts with the round
            seat.dropped_at = now_ms
    seed = seed or secrets.token_hex(16)
    scores = [room.scores.get(p, 0) for p in players]
    state, events = new_game(players, rules, seed, dealer=dealer, scores=scores, now_ms=now_ms)
    loaded.game = state
    room.gone = {}
    room.record = Record(tuple(players), room.rules, seed, dealer, tuple(scores), now_ms).to_dict()
    del room.record["steps"]  # kept in Redis beside the room (see Loaded)
    del room.record["rules"]  # the room's while the round plays (see Room.record)
    if replayed_from is not None:
        room.record["replayed_from"] = replayed_from
    loaded.steps, loaded.new_round = [], True
    room.round += 1
    room.dealer = dealer
    room.status = PLAYING
    started = [e for e in events if e.kind is EventKind.STARTED]
    for e in started:
        e.data["round"] = room.round
        if replayed_from is not None:
            e.data["replayed_from"] = {k: v for k, v in replayed_from.items() if k != "uid"}
    if state.winner is not None:  # over at the deal (a first card's draw hit the mercy limit)
        round_finished(loaded, now_ms)
    return list(events)


def leave(loaded: Loaded, player: str) -> list[Event]:
    room = loaded.room
    sp = room.spectator(player)
    if sp is not None:
        room.spectators.remove(sp)
        settle_host(room)
        return [room_event(RoomEventKind.LEFT, player=player)]
    seat = room.seat(player)
    if seat is None:
        raise Refused(Err.BAD_MESSAGE, "not in this room")
    events = [room_event(RoomEventKind.LEFT, player=player)]
    if room.status == LOBBY:
        room.seats.remove(seat)
        room.scores.pop(player, None)
    else:
        hand_to_bot(room, seat)
        events.append(room_event(RoomEventKind.REPLACED_BY_BOT, player=player))
        return events
    settle_host(room)
    return events


def react(loaded: Loaded, player: str, reaction: str, now_ms: int, interval_ms: int) -> list[Event]:
    room = loaded.room
    if reaction not in REACTIONS:
        raise Refused(Err.BAD_REACTION, f"reaction must be one of {', '.join(REACTIONS)}")
    last = room.last_reaction.get(player)
    if last is not None and now_ms - last < interval_ms:
        raise Refused(Err.RATE_LIMITED, "one reaction a second")
    room.last_reaction[player] = now_ms
    return [room_event(RoomEventKind.REACTION, player=player, reaction=reaction)]
