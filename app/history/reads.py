"""The night's record read back: a room's matches and rounds, one round, a round's replay as any
spectator saw it (what ``app/api/history.py`` serves; :mod:`app.history.writer` writes them)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlalchemy.orm import selectinload

from app.history.deals import shared_results
from app.history.models import Match, Round
from engine import Action, ActionKind, Event, EventKind, Record, apply, make_rules, new_game, view_for


async def room_history(sessions: async_sessionmaker, code: str, since_ms: int = 0,
                       with_room: bool = True) -> dict[str, Any] | None:
    """The matches of room ``code`` and their rounds that started from ``since_ms`` on (a room
    that had the same code before is left out: see ``app/api/history.py``); ``with_room``:
    name the room (a shared record does not)."""
    async with sessions() as session:
        matches = (await session.scalars(
            select(Match).where(Match.room_code == code).order_by(Match.number)
            .options(selectinload(Match.rounds).selectinload(Round.seats)))).all()
    shown = [(m, [r for r in m.rounds if r.started_ms >= since_ms]) for m in matches]
    shown = [(m, rounds) for m, rounds in shown if rounds]
    if not shown:
        return None
    found: dict[str, Any] = {"code": code} if with_room else {}
    found["matches"] = [{
        "number": m.number, "started_ms": m.started_ms, "ended_ms": m.ended_ms,
        "winner": m.winner, "winner_name": m.winner_name, "target_score": m.rules.get("target_score"),
        "rounds": [round_summary(r, with_room) for r in rounds]} for m, rounds in shown]
    _link_replays(shown, found["matches"])
    # rounds dealt from another room's shared deal: that deal's result, to compare
    deals = await shared_results(sessions, {r.deal_of for _, rounds in shown for r in rounds if r.deal_of})
    if deals:
        found["deals"] = deals
    return found


def _link_replays(shown: list[tuple[Match, list[Round]]], matches: list[dict[str, Any]]) -> None:
    """A round dealt from the seed of an earlier round (``replay_deal``, app/rooms/deals.py) is
    that deal played again: its summary's ``replay_of`` is the id of the first round dealt so.
    Seeds are 128 random bits, so two equal ones are one deal."""
    first: dict[str, str] = {}
    for (_, rounds), match in zip(shown, matches, strict=True):
        for r, summary in zip(rounds, match["rounds"], strict=True):
            original = first.setdefault(r.seed, r.public_id)
            if original != r.public_id:
                summary["replay_of"] = original


def round_summary(r: Round, with_room: bool = True) -> dict[str, Any]:
    summary = {
        "id": r.public_id, "room": r.room_code, "number": r.number, "winner": r.winner, "reason": r.reason,
        "points": r.points, "eliminations": r.eliminations, "started_ms": r.started_ms,
        "ended_ms": r.ended_ms, "duration_ms": r.duration_ms, "actions": r.action_count,
        "match_over": r.match_over,
        "seats": [{"seat": s.seat, "id": s.player_id, "name": s.name, "bot": s.bot_level,
                   "final_cards": s.final_cards, "eliminated": s.eliminated,
                   "score": s.score_after} for s in r.seats],
    }
    if r.deal_of is not None:
        summary["deal_of"] = r.deal_of
    if not with_room:
        del summary["room"]
    return summary


async def load_round(sessions: async_sessionmaker, public_id: str) -> Round | None:
    """The round whose wire id is ``public_id`` (``Round.public_id``)."""
    async with sessions() as session:
        return await session.scalar(
            select(Round).where(Round.public_id == public_id)
            .options(selectinload(Round.seats), selectinload(Round.record)))


def public_replay(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The finished round step by step as any spectator saw it: public events and table."""
    rec = Record.from_dict(record)
    # the deal's own events (the first card and what it did): a replay opens as the table did
    state, opening = new_game(rec.players, make_rules(rec.rules), rec.seed, dealer=rec.dealer,
                              scores=rec.scores, now_ms=rec.start_ms)
    steps = [{"step": 0, "player": None, "action": None,
              "events": [e.public() for e in opening], "table": view_for(state, None)}]
    for i, step in enumerate(rec.steps, start=1):
        state, events = apply(state, step.player, step.action, step.now_ms)
        steps.append({"step": i, "player": step.player, "at_ms": step.now_ms,
                      "action": public_action(step.action, events),
                      "events": [e.public() for e in events], "table": view_for(state, None)})
    return steps


def public_action(action: Action, events: tuple[Event, ...]) -> dict[str, Any]:
    """``action`` as far as a spectator saw it, from the events it made (they never see an action).

    A play that lacks its colour, 7 target or Discard All top does not happen yet: the game
    pauses with the card still in the player's hand, and only they see which card waits
    (rules.md "Choices", the ``pending`` of ``engine.view``). The card shows in the ``played``
    of the step that puts it down (``choose``, ``resolve``, ``timeout``), and never if ``cancel``
    takes it back or the round ends first; so until then, such a play is a play and no more."""
    wire = action.to_wire()
    kind = action.kind
    if kind is ActionKind.DRAW or kind is ActionKind.PASS:
        return {"type": wire["type"]}
    if kind is ActionKind.PLAY and not any(
            e.kind is EventKind.PLAYED and e.data["card"] == action.card for e in events):
        return {"type": wire["type"]}
    return wire
