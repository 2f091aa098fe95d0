"""A round in play: a seat's (or the table's timer's) game action goes to the engine, and a
round that ends moves the room on (rules.md "Scoring", "End of a match")."""

from __future__ import annotations

from typing import Any

from app.core.protocol import Err
from app.rooms.model import LOBBY, MATCH_OVER, PLAYING, ROUND_OVER, Loaded
from app.rooms.outcomes import Refused
from app.storage.store import STEPS_MARK
from engine import Action, ActionKind, Event, IllegalAction, apply
from engine.mechanics import match_won


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
        round_finished(loaded, now_ms)
    return list(events)


def round_finished(loaded: Loaded, now_ms: int) -> None:
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
    # what the history writer stores once the database has it (see app/history/writer.py)
    room.finished_rounds.append({
        "uid": f"{room.code}:{room.round}:{record['start_ms']}", "match": room.match,
        # the commit script puts the round's steps where the mark is (they are in Redis)
        "round": room.round, "record": {**record, "rules": room.record_rules(), "steps": STEPS_MARK},
        "ended_ms": now_ms,
        "match_over": over,
        "winner": state.players[state.winner] if state.winner is not None else None,
        "reason": state.end_reason, "points": state.points, "seats": seats})


def to_action(msg: Any) -> Action:
    """A validated protocol message as an engine action (its fields were checked at the edge:
    built directly, not through ``model_dump`` and ``Action.from_wire``, ~3x the cost)."""
    fields = msg.__dict__  # a pydantic model's values: getattr of a field a type lacks raises inside
    return Action(ActionKind(msg.type), fields.get("card"), fields.get("color"), fields.get("target"),
                  fields.get("top"), fields.get("uno", False))
