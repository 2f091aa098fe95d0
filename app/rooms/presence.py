"""Who is here: sockets that say hello or drop, a server process that died, a reconnect grace
that ran out, and who hosts the room (rules.md "Timers", protocol.md "Presence")."""

from __future__ import annotations

from typing import Any

from app.rooms.model import Loaded, Room, Seat
from app.rooms.outcomes import NoChange
from engine import Event, EventKind


def _event(kind: EventKind, **data: Any) -> Event:
    return Event(kind, data)


def connected(loaded: Loaded, player: str, node: str | None = None) -> list[Event]:
    """``player``'s socket said hello on server process ``node``. A player a bot stood in for
    (away past the reconnect grace) takes the seat back at once: hand, score and turn as the
    bot left them (rules.md "Timers")."""
    room = loaded.room
    member = room.seat(player) or room.spectator(player)
    if member is None or (member.connected and member.node == node):
        raise NoChange
    was_dropped = member.dropped_at is not None
    if isinstance(member, Seat) and member.away:
        member.bot, member.away = None, False
        was_dropped = True
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
    """Reconnect grace ran out: an easy bot plays the seat until its player comes back (their
    token stays valid: a hello takes the seat back)."""
    _bot_plays(loaded.room, seat)
    seat.away = True
    return [Event(EventKind.REPLACED_BY_BOT, {"player": seat.id})]


def hand_to_bot(room: Room, seat: Seat) -> None:
    """An easy bot plays ``seat`` for good: its player left, and their token goes."""
    _bot_plays(room, seat)
    seat.token_hash = None


def _bot_plays(room: Room, seat: Seat) -> None:
    seat.bot, seat.connected, seat.dropped_at, seat.node = "easy", True, None, None
    if room.host == seat.id:
        pass_host(room)


def has_host(room: Room) -> bool:
    """The host is still a human in the room (a seat handed to a bot is not)."""
    seat = room.seat(room.host)
    if seat is not None:
        return seat.bot is None
    watcher = room.spectator(room.host)
    return watcher is not None and not watcher.screen


def pass_host(room: Room) -> None:
    """The first human seat runs the room, else the first spectator who is a person (a big
    screen never hosts: nobody holds it)."""
    humans = [s for s in room.seats if s.bot is None]
    watchers = [s for s in room.spectators if not s.screen]
    if humans:
        room.host = humans[0].id
    elif watchers:
        room.host = watchers[0].id
