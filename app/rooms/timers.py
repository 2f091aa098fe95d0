"""The room's timed steps: what is due, and when.

:func:`due_step` names the one thing the room must do now (a reconnect grace ran out, an absent
player's choice, a catch window or turn timer, a bot's catch, a bot's turn); :func:`next_due`
says when the next such thing falls, for the scheduler. A bot's turn is named, not decided: the
tick decides it (app.rooms.commands), on the loop or through a worker.
"""

from __future__ import annotations

import random
from typing import Any

from app.core.settings import Settings
from app.rooms.model import LOBBY, PLAYING, Loaded, Seat
from engine import Action, ActionKind, next_deadline
from engine.ai.reaction import catch_delay_ms


def _actor(loaded: Loaded) -> str | None:
    game = loaded.game
    if game is None or game.winner is not None:
        return None
    seat = game.pending.player if game.pending is not None else game.turn
    return game.players[seat]


def _bot_seat(loaded: Loaded, player: str | None) -> Seat | None:
    if player is None:
        return None
    seat = loaded.room.seat(player)
    return seat if seat is not None and seat.bot else None


def schedule(loaded: Loaded, now_ms: int, settings: Settings, acted: str | None = None) -> None:
    """Keep ``room.bot_due`` right after a change: set when a bot must act, cleared otherwise.
    ``acted`` is the bot that just acted: the next bot move (its own or another bot's) gets a
    fresh think time."""
    room = loaded.room
    actor = _actor(loaded) if room.status == PLAYING else None
    if actor != room.turn_of:
        room.turn_of, room.turn_since = actor, now_ms
    bot = _bot_seat(loaded, actor)
    if bot is None:
        room.bot_due = None
    elif room.bot_due is None or acted is not None:
        room.bot_due = now_ms + settings.bot_delay_ms


def _catch_due(loaded: Loaded, settings: Settings) -> tuple[int, str, str] | None:
    """(when, catcher, target) of the earliest catch a bot will make: each bot seat draws its
    reaction to each exposure (engine.ai.reaction, by its level), from a seed of the game, the
    exposure and the seat, so every look at the same room finds the same draws."""
    game = loaded.game
    if game is None or not game.exposed:
        return None
    window = game.rules.catch_window_s * 1000
    best = None
    for who, until in game.exposed:
        target = game.players[who]
        for seat in loaded.room.seats:
            if not seat.bot or seat.id == target or seat.id not in game.players \
                    or game.eliminated[game.players.index(seat.id)]:
                continue
            rng = random.Random(f"{game.seed}:catch:{target}:{until}:{seat.id}")
            delay = catch_delay_ms(seat.bot, window, rng)
            if delay is None:
                continue
            at = until - window + delay + settings.bot_catch_delay_ms
            if at < until and (best is None or at < best[0]):
                best = (at, seat.id, target)
    return best


def next_due(loaded: Loaded, settings: Settings, bot_not_before: int = 0) -> int | None:
    """When the room's next step is due (None: nothing is). ``bot_not_before`` holds a bot's
    move back until then: its search runs elsewhere, and only its answer, or the search running
    late, needs the room woken."""
    room = loaded.room
    # in the lobby a dropped player just waits (the host may remove the seat); the grace runs
    # only while a round is on or between rounds
    times: list[int] = [s.dropped_at + settings.reconnect_grace_ms
                        for s in room.seats if s.dropped_at is not None and room.status != LOBBY]
    away = _away_turn_due(loaded, settings)
    if away is not None:
        times.append(away[0])
    game = loaded.game
    if room.status == PLAYING and game is not None and game.winner is None:
        nd = next_deadline(game)
        if nd is not None:
            times.append(nd[1])
        if room.bot_due is not None:
            times.append(max(room.bot_due, bot_not_before))
        catch = _catch_due(loaded, settings)
        if catch is not None:
            times.append(catch[0])
        chooser = _absent_chooser(loaded)
        if chooser is not None:
            times.append(0)
    return min(times) if times else None


def _away_turn_due(loaded: Loaded, settings: Settings) -> tuple[int, Seat] | None:
    """(when, seat) of a disconnected player whose turn (or choice) the game waits for: their
    seat's bot takes over AWAY_TURN_GRACE_MS after the turn came to them or they dropped, whichever
    came later (a turn that comes to someone long gone still waits the short grace: a phone
    whose screen just locked is back within it)."""
    grace = settings.away_turn_grace_ms
    room = loaded.room
    if not grace or room.status != PLAYING or room.turn_of is None:
        return None
    seat = room.seat(room.turn_of)
    if seat is None or seat.bot is not None or seat.dropped_at is None:
        return None
    return max(seat.dropped_at, room.turn_since) + grace, seat


def _absent_chooser(loaded: Loaded) -> str | None:
    game = loaded.game
    if game is None or game.pending is None:
        return None
    seat = loaded.room.seat(game.players[game.pending.player])
    return seat.id if seat is not None and seat.bot is None and not seat.connected else None


def due_step(loaded: Loaded, now_ms: int, settings: Settings) -> tuple[str, Any] | None:
    """The first thing due at ``now_ms``: ``("grace", seat)``, ``("system", action)``,
    ``("bot", (player, action))`` (a catch) or ``("turn", (player, level))`` (a bot's move, to
    be decided); ``None`` when nothing is due."""
    room = loaded.room
    for seat in room.seats:
        if seat.dropped_at is not None and room.status != LOBBY \
                and now_ms >= seat.dropped_at + settings.reconnect_grace_ms:
            return "grace", seat
    away = _away_turn_due(loaded, settings)
    if away is not None and now_ms >= away[0]:
        return "stand_in", away[1]
    game = loaded.game
    if room.status != PLAYING or game is None or game.winner is not None:
        return None
    if _absent_chooser(loaded) is not None:
        return "system", Action(ActionKind.RESOLVE)
    nd = next_deadline(game)
    if nd is not None and now_ms >= nd[1]:
        return "system", Action(nd[0])
    catch = _catch_due(loaded, settings)
    if catch is not None and now_ms >= catch[0]:
        return "bot", (catch[1], Action(ActionKind.CATCH, target=catch[2]))
    actor = _actor(loaded)
    seat = _bot_seat(loaded, actor)
    if seat is not None and actor is not None and room.bot_due is not None and now_ms >= room.bot_due:
        return "turn", (actor, seat.bot or "easy")
    return None
