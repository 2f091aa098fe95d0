"""Every room command in one table: what each client message, join, presence change and timer
step does to a room, as the :class:`~app.rooms.intent.Intent` its actor runs.

A command's builder takes what the command needs and returns its ``run(loaded, now)``: a pure
change of the loaded room (``lobby``, ``play``, ``presence``) returning the events to announce,
or raising ``Refused``/``NoChange``. The actor runs it against the room as last committed,
then commits (and runs it again on the new state if another process committed first).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from app.core.protocol import GAME_TYPES
from app.core.settings import Settings
from app.rooms import bot_seats, chat, deals, lobby, night, play, presence, timers
from app.rooms.intent import Intent, Run
from app.rooms.model import Loaded
from app.rooms.outcomes import NoChange, Refused
from app.rooms.sockets import LocalSockets, RoomSocket
from engine import Event, autoplay

log = logging.getLogger("mercyless.room")


# -- client messages (protocol.md "Client -> server"): the message, its socket, the settings ----

def _game(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player, action = sock.player, play.to_action(msg)
    return lambda loaded, now: play.game_action(loaded, player, action, now, msg.id)


def _sync(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    def run(loaded: Loaded, now: int) -> list[Event]:
        sock.view = None  # the actor sends a fresh welcome
        raise NoChange
    return run


def _set_rules(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: lobby.set_rules(loaded, player, msg.rules)


def _add_bot(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: lobby.add_bot(loaded, player, msg.level)


def _set_bot(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: lobby.set_bot(loaded, player, msg.player_id, msg.level)


def _bot_plays(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: presence.bot_plays(loaded, player, msg.player_id)


def _remove_seat(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: lobby.remove_seat(loaded, player, msg.player_id)


def _start(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: deals.start(loaded, player, now)  # from a shared deal, if one was picked


def _rematch(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: lobby.rematch(loaded, player, now)


def _replay_deal(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: deals.replay_deal(loaded, player, now)


def _lobby(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: lobby.back_to_lobby(loaded, player)


def _set_room(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: lobby.set_room(loaded, player, msg.locked, msg.readmit)


def _leave(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: lobby.leave(loaded, player)


def _react(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player, interval = sock.player, settings.reaction_interval_ms
    return lambda loaded, now: lobby.react(loaded, player, msg.reaction, now, interval)


def _chat(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player, interval = sock.player, settings.chat_interval_ms
    return lambda loaded, now: chat.chat(loaded, player, msg.phrase, now, interval)


def _end_night(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: night.end_night(loaded, player)


def _mute(msg: Any, sock: RoomSocket, settings: Settings) -> Run:
    player = sock.player
    return lambda loaded, now: chat.mute(loaded, player, msg.player_id, msg.muted)


# -- the server's own commands ------------------------------------------------------------------

def _join(name: str, address: str | None, settings: Settings, joined: dict[str, Any],
          screen: bool = False, screen_token: str | None = None, watch: bool = False) -> Run:
    """HTTP join from ``address``: seat ``name`` (or make them a spectator; a big ``screen``
    always is one); ``joined`` gets the new credentials."""
    def run(loaded: Loaded, now: int) -> list[Event]:
        pid, token, spectator, events = lobby.join(loaded, name, address, settings.max_spectators,
                                                   screen, now, screen_token, watch)
        joined.update(code=loaded.room.code, player_id=pid, token=token, spectator=spectator)
        if screen:
            joined["name"] = events[0].data["name"]
        return events
    return run


def _use_deal(digest: str, deal: dict[str, Any] | None) -> Run:
    """The member whose token hashes to ``digest`` picks a shared ``deal`` (read from the
    database by the HTTP route) for the next start, or drops it (None)."""
    return lambda loaded, now: deals.use_deal(loaded, digest, deal)


def _hello(sock: RoomSocket, digest: str, sockets: LocalSockets, node_id: str) -> Run:
    """A socket said hello with the token whose hash is ``digest``: it becomes its player's
    socket here before the commit, so the fan-out after it sends the welcome."""
    def run(loaded: Loaded, now: int) -> list[Event]:
        member = loaded.room.member_by_token(digest)
        if member is None:
            raise Refused("bad_token", "unknown or revoked token")
        sock.player = member.id
        sockets.put(sock)
        return presence.connected(loaded, member.id, node_id)
    return run


def _drop(sock: RoomSocket, sockets: LocalSockets, node_id: str) -> Run:
    """``sock`` closed: its player is disconnected unless a newer socket said hello here."""
    def run(loaded: Loaded, now: int) -> list[Event]:
        if sockets.holds(sock.code, sock.player):
            raise NoChange
        return presence.disconnected(loaded, sock.player, now, node_id)
    return run


def _node_lost(node: str) -> Run:
    """Server process ``node`` stopped beating: the players it held are disconnected."""
    return lambda loaded, now: presence.node_lost(loaded, node, now)


def _reclaimed(player: str, node_id: str) -> Run:
    """This process was given up by the others (a long stall) but still holds ``player``'s
    socket: it is connected here again."""
    return lambda loaded, now: presence.connected(loaded, player, node_id)


#: how a tick gets a bot's move: ``think(loaded, player, level, now)`` returns it, or raises
#: ``Thinking`` when a worker searches for it (the move comes back as a ``bot_move``)
Think = Callable[[Loaded, str, str, int], Any]


def _tick(settings: Settings, again: Callable[[], None], think: Think,
          decided: tuple[str, int, Any] | None = None) -> Run:
    """The room's deadline came: run the step that is due (a reconnect grace that ran out, the
    turn or a window's timer, a bot's catch or move); ``again`` queues the next tick when more
    is due at once (bots with no think time, several expiries). ``decided`` is a bot's move
    searched for elsewhere: (player, the room's version it was asked at, the action)."""
    def run(loaded: Loaded, now: int) -> list[Event]:
        step = timers.due_step(loaded, now, settings)
        if step is None:
            raise NoChange
        kind, what = step
        if kind == "turn":
            player, level = what
            # a move searched for another version (the room moved on) is never applied: the
            # bot is asked again for the room as it is
            if decided is not None and decided[:2] == (player, loaded.room.version):
                # (a search that failed: the move is made here, quickly)
                action = decided[2] if decided[2] is not None else \
                    bot_seats.decide_here(loaded, player, level, now, settings)
            else:
                action = think(loaded, player, level, now)
            if action is None:
                raise NoChange
            kind, what = "bot", (player, action)
        events = TIMER_STEPS[kind](loaded, now, what)
        timers.schedule(loaded, now, settings, acted=what[0] if kind == "bot" else None)
        due = timers.next_due(loaded, settings)
        if due is not None and due <= now:  # (otherwise the commit indexes when it is)
            again()
        return events
    return run


def _bot_move(settings: Settings, again: Callable[[], None], think: Think, player: str,
              version: int, action: Any) -> Run:
    """A worker's search for ``player``'s move at ``version`` came back (``action`` None: it
    failed, and the move is decided here). Applied only if the room is still at that version
    and the bot's move is what is due; otherwise whatever is due runs, as a tick."""
    return _tick(settings, again, think, (player, version, action))


def _grace_step(loaded: Loaded, now: int, seat: Any) -> list[Event]:
    return presence.replace_by_bot(loaded, seat, now)


def _stand_in_step(loaded: Loaded, now: int, seat: Any) -> list[Event]:
    return presence.stand_in(loaded, seat)


def _timer_step(loaded: Loaded, now: int, action: Any) -> list[Event]:
    return play.game_action(loaded, None, action, now)


def _bot_step(loaded: Loaded, now: int, move: tuple[str, Any]) -> list[Event]:
    player, action = move
    try:
        return play.game_action(loaded, player, action, now)
    except Refused as refused:  # a policy bug must not stall the table
        log.error("bot move refused (%s): %s", refused.code, action, extra={"room": loaded.room.code})
        game = loaded.game
        assert game is not None
        fallback = autoplay.auto_action(game.clone(), game.players.index(player))
        return play.game_action(loaded, player, fallback, now)


#: what a due step of a tick does (``timers.due_step`` names it)
TIMER_STEPS: dict[str, Callable[[Loaded, int, Any], list[Event]]] = {
    "grace": _grace_step, "stand_in": _stand_in_step, "system": _timer_step, "bot": _bot_step,
}

#: every room command: its kind -> the builder of its ``run``
COMMANDS: dict[str, Callable[..., Run]] = {
    **dict.fromkeys(GAME_TYPES, _game),
    "sync": _sync,
    "set_rules": _set_rules,
    "add_bot": _add_bot,
    "set_bot": _set_bot,
    "bot_plays": _bot_plays,
    "remove_seat": _remove_seat,
    "start": _start,
    "rematch": _rematch,
    "replay_deal": _replay_deal,
    "lobby": _lobby,
    "set_room": _set_room,
    "leave": _leave,
    "react": _react,
    "chat": _chat,
    "mute": _mute,
    "end_night": _end_night,
    "join": _join,
    "use_deal": _use_deal,
    "hello": _hello,
    "drop": _drop,
    "node_lost": _node_lost,
    "reclaimed": _reclaimed,
    "tick": _tick,
    "bot_move": _bot_move,
}


# commands judged against the room as stored, not as this process's actor last saw it: each
# comes after something may have been lost, and the lost thing may be this process's own news of
# another process's commit (its message gone with a failed Redis node, or never sent: a sweep
# that wrote this process's players off publishes to nobody). A client syncs after a gap, and
# says hello after a lost socket; a process the others gave up claims its players back, and
# judged on its cached room, where they are still here, that would change nothing. One read
# each, and none of them is frequent.
READ_STORED = frozenset({"sync", "hello", "reclaimed"})


def intent_for(msg: Any, sock: RoomSocket, settings: Settings, reply: RoomSocket | None = None) -> Intent:
    """The intent of a client's parsed message on ``sock`` (answered on ``reply``, if given)."""
    return Intent(msg.type, COMMANDS[msg.type](msg, sock, settings), msg.id, sock.player, reply)


def command(kind: str, *args: Any) -> Intent:
    """The intent of one of the server's own commands (``join``, ``hello``, ``tick`` ...)."""
    return Intent(kind, COMMANDS[kind](*args))
