"""Who is here: sockets that say hello or drop, a server process that died, a reconnect grace
that ran out, and who hosts the room (rules.md "Timers", protocol.md "Presence")."""

from __future__ import annotations

from typing import Any

from app.core.protocol import Err
from app.rooms.events import RoomEventKind, room_event
from app.rooms.model import LOBBY, Loaded, Room, Seat
from app.rooms.outcomes import NoChange, Refused
from engine import Event


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
    room.claimed = True
    settle_host(room)  # the creator back, or a stand-in who may now hold the room
    return [room_event(RoomEventKind.RECONNECTED, player=player)] if was_dropped else []


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
    return [room_event(RoomEventKind.DISCONNECTED, player=player)]


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


def stand_in(loaded: Loaded, seat: Seat) -> list[Event]:
    """A disconnected player's turn waited AWAY_TURN_GRACE_MS, or the host handed the seat to its
    bot: an easy bot plays it from now on, and the seat stays its player's (a hello takes it
    back at once). Their reconnect grace runs on (``dropped_at`` kept): the host role moves
    only when it runs out (protocol.md "The host")."""
    if seat.bot is not None or seat.dropped_at is None:
        raise NoChange
    seat.bot, seat.away = "easy", True
    return [room_event(RoomEventKind.REPLACED_BY_BOT, player=seat.id)]


def bot_plays(loaded: Loaded, player: str, target: str) -> list[Event]:
    """The host hands a disconnected player's seat to its bot now, rather than wait for the
    turn's short grace (``stand_in``): while a round plays or between rounds."""
    room = loaded.room
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can do that")
    if room.status == LOBBY:
        raise Refused(Err.NOT_STARTED, "in the lobby a seat waits for its player")
    seat = room.seat(target)
    if seat is None or seat.bot is not None or seat.dropped_at is None:
        raise Refused(Err.NOT_DISCONNECTED, "no disconnected player in that seat")
    return stand_in(loaded, seat)


def replace_by_bot(loaded: Loaded, seat: Seat, now_ms: int) -> list[Event]:
    """Reconnect grace ran out: an easy bot plays the seat until its player comes back (their
    token stays valid: a hello takes the seat back)."""
    room = loaded.room
    stood_in = seat.away  # a bot already plays it (``stand_in``): nothing new to tell
    if seat.id == room.creator:  # only those already here when the creator dropped may stand in
        room.host_lost_ms = seat.dropped_at if seat.dropped_at is not None else now_ms
    seat.bot, seat.connected, seat.dropped_at, seat.node = "easy", True, None, None
    seat.away = True
    settle_host(room)
    return [] if stood_in else [room_event(RoomEventKind.REPLACED_BY_BOT, player=seat.id)]


def hand_to_bot(room: Room, seat: Seat) -> None:
    """An easy bot plays ``seat`` for good: its player left, and their token goes."""
    seat.bot, seat.connected, seat.dropped_at, seat.node = "easy", True, None, None
    seat.token_hash = None
    settle_host(room)


def settle_host(room: Room) -> None:
    """Who hosts the room (protocol.md "The host"), worked out again after anyone comes, goes
    or is replaced by a bot. The creator hosts while in their seat (a dropped socket within the
    reconnect grace included). Away past the grace, the role goes to the seated human who has
    sat longest and is connected, among those who were already here when the creator dropped:
    whoever comes in with the code meanwhile never gets it, and the creator takes it back with
    their next hello. A creator who left for good hands the room on for good, to the human who
    has sat longest (else to a waiting spectator who is a person; a big screen never hosts)."""
    creator = room.seat(room.creator) if room.creator is not None else None
    if creator is not None and (creator.bot is None or creator.dropped_at is not None):
        # (a bot standing in within the reconnect grace: ``stand_in``)
        room.host, room.host_lost_ms = creator.id, None
        return
    if creator is not None and creator.away:  # their token still holds: they may come back
        lost = room.host_lost_ms if room.host_lost_ms is not None else 0
        current = room.seat(room.host)
        if (current is not None and current is not creator and current.bot is None
                and current.joined_ms <= lost):
            return  # a stand-in keeps it through their own reconnect grace
        stand_ins = [s for s in room.seats if s.bot is None and s.connected and s.joined_ms <= lost]
        room.host = _longest_seated(room, stand_ins).id if stand_ins else creator.id
        return
    heirs = [s for s in room.seats if s.bot is None] or [s for s in room.spectators if not s.screen]
    if heirs:
        heir = _longest_seated(room, [s for s in heirs if s.connected] or heirs)
        room.host = room.creator = heir.id
        room.host_lost_ms = None


def _longest_seated(room: Room, members: list[Any]) -> Any:
    order = {m.id: i for i, m in enumerate([*room.seats, *room.spectators])}
    return min(members, key=lambda m: (m.joined_ms, order[m.id]))
