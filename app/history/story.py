"""The night's story: who won what tonight, and a few awards, from the room's recorded rounds.

Two parts. :func:`round_trace` plays a stored round's record through the engine once and keeps
what the awards need of each step: its mover, its public events and every hand's size after it.
:func:`night_story` is a pure function of those traces (hand-made ones in the tests) and returns
the story as JSON. :func:`load_night` reads the room's rounds from the database.

The awards (each names one player and a value, or is left out when nobody earned it; a tie goes
to whoever got there first):

- ``biggest_stack``: the most cards taken from one stack (``took_stack.count``);
- ``biggest_roulette``: the most cards one Wild Color Roulette turned into a hand;
- ``knockouts``: eliminations dealt. The one who dealt it: the roulette's or the catch's ``by``;
  for a stack taken, whoever put its last card down (only draw cards go on a stack); for a
  penalty draw inside someone's move (a draw card with stacking off), the mover. Running out of
  luck drawing on one's own turn is nobody's knock-out;
- ``closest_escape``: the most cards someone held after a move in a round they were not
  knocked out of (24 with the mercy limit at 25), with the round's ``mercy_limit``;
- ``uno_streak``: the most rounds in a row in which a player called UNO (each round they sat in
  counts: one where they sat and did not call breaks the streak, one they sat out does not);
- ``bots_vs_people`` (not a player's award): rounds won by bots, rounds won by people.

With them, the newest round's key moments (:func:`key_moments`): its biggest swings.
"""

from __future__ import annotations

from typing import Any, TypedDict

import orjson
from sqlalchemy import select
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlalchemy.orm import selectinload

from app.history.models import Match, Round
from engine import IllegalAction, Record, apply
from engine.record import start as start_round


class TraceStep(TypedDict):
    player: str | None
    events: list[dict[str, Any]]
    hands: dict[str, int]  # cards held after the step, by the seats still in


class RoundTrace(TypedDict):
    match: int
    number: int
    winner: str | None
    match_over: bool
    mercy_limit: int | None
    seats: list[dict[str, Any]]  # {"id", "name", "bot": bool}
    steps: list[TraceStep]


def round_trace(row: Round) -> RoundTrace:
    """What the story needs of stored round ``row`` (with its seats and record loaded). A record
    today's engine no longer plays out (an older engine's) keeps its winner and seats, no steps."""
    seats = [{"id": s.player_id, "name": s.name, "bot": s.bot_level is not None} for s in row.seats]
    trace: RoundTrace = {"match": row.match.number, "number": row.number, "winner": row.winner,
                         "match_over": row.match_over, "mercy_limit": None, "seats": seats, "steps": []}
    try:
        record = Record.from_dict(orjson.loads(row.record.record))
        trace["mercy_limit"] = record.rules.get("mercy_limit")
        state = start_round(record)
        for step in record.steps:
            state, events = apply(state, step.player, step.action, step.now_ms)
            hands = {p: len(state.hands[i]) for i, p in enumerate(state.players) if not state.eliminated[i]}
            trace["steps"].append({"player": step.player, "events": [e.public() for e in events],
                                   "hands": hands})
    except (IllegalAction, ValueError, KeyError, TypeError):  # an unreadable record loses its awards only
        trace["steps"] = []
    return trace


async def load_night(sessions: async_sessionmaker, code: str, since_ms: int) -> list[Round]:
    """Room ``code``'s rounds that started from ``since_ms`` on, in the order they were played."""
    async with sessions() as session:
        rows = (await session.scalars(
            select(Round).join(Match).where(Round.room_code == code, Round.started_ms >= since_ms)
            .order_by(Match.number, Round.number)
            .options(selectinload(Round.seats), selectinload(Round.record), selectinload(Round.match)))).all()
    return list(rows)


class _Best:
    """The greatest value seen and whose it was; the first to reach it keeps it."""

    def __init__(self) -> None:
        self.player: str | None = None
        self.value = 0
        self.extra: dict[str, Any] = {}

    def offer(self, player: str | None, value: int, **extra: Any) -> None:
        if player is not None and value > self.value:
            self.player, self.value, self.extra = player, value, extra

    def award(self, key: str) -> dict[str, Any] | None:
        return None if self.player is None else {"key": key, "player": self.player,
                                                 "value": self.value, **self.extra}


def _knocker(event: dict[str, Any], before: dict[str, Any] | None, mover: str | None,
             stack_by: str | None) -> str | None:
    """Who knocked out the player of ``eliminated`` ``event`` (``before``: the step's event
    before it; ``stack_by``: who put the last card on a stack)."""
    out = event.get("player")
    kind = before.get("kind") if before else None
    if kind in ("roulette", "caught"):
        by = before.get("by")
    elif kind == "took_stack":
        by = stack_by
    else:
        by = mover
    return None if by == out else by


#: what a step's events swing the table by: the cards they moved into a hand, and a knock-out
#: (a mercy limit's worth); a hand swapped or passed round counts a little
_SWAP_SWING = 5
_KNOCKOUT_SWING = 25


def _swing(events: list[dict[str, Any]]) -> int:
    swing = 0
    for ev in events:
        kind = ev.get("kind")
        if kind in ("took_stack", "caught"):
            swing += int(ev.get("count", 0))
        elif kind == "roulette":
            swing += len(ev.get("cards") or ())
        elif kind == "drew" and int(ev.get("count", 0)) > 1:  # a penalty, or digging for a card
            swing += int(ev["count"])
        elif kind in ("swapped", "passed_hands"):
            swing += _SWAP_SWING
        elif kind == "eliminated":
            swing += _KNOCKOUT_SWING
    return swing


def key_moments(trace: RoundTrace, limit: int = 3) -> list[dict[str, Any]]:
    """The round's biggest swings, at most ``limit``, in the order they happened: each its step
    (from 1), mover, public events, hands after it and ``swing``; a tie goes to the earlier."""
    swings = [(_swing(step["events"]), i) for i, step in enumerate(trace["steps"])]
    best = sorted((s for s in swings if s[0] > 0), key=lambda s: (-s[0], s[1]))[:limit]
    steps = trace["steps"]
    return [{"step": i + 1, "player": steps[i]["player"], "events": steps[i]["events"],
             "hands": steps[i]["hands"], "swing": swing} for swing, i in sorted(best, key=lambda s: s[1])]


def night_story(rounds: list[RoundTrace], hue: Any = None) -> dict[str, Any]:
    """The night's story from its rounds' traces, oldest first. ``hue(id, name)`` gives a
    player's colour (the rooms layer's; left out without it)."""
    names: dict[str, str] = {}
    bots: dict[str, bool] = {}
    rounds_won: dict[str, int] = {}
    matches_won: dict[str, int] = {}
    knockouts: dict[str, int] = {}
    streak: dict[str, int] = {}
    stack, roulette, escape, uno_best = _Best(), _Best(), _Best(), _Best()
    score = {"bots": 0, "people": 0}
    for rnd in rounds:
        for seat in rnd["seats"]:
            names[seat["id"]] = seat["name"]
            bots[seat["id"]] = bool(seat["bot"])
        winner = rnd["winner"]
        if winner is not None:
            rounds_won[winner] = rounds_won.get(winner, 0) + 1
            score["bots" if bots.get(winner) else "people"] += 1
            if rnd["match_over"]:
                matches_won[winner] = matches_won.get(winner, 0) + 1
        called: set[str] = set()
        knocked: set[str] = set()
        held: dict[str, int] = {}
        stack_by: str | None = None
        for step in rnd["steps"]:
            events = step["events"]
            for i, ev in enumerate(events):
                kind = ev.get("kind")
                if kind == "played":
                    stack_by = ev.get("player")
                elif kind == "took_stack":
                    stack.offer(ev.get("player"), int(ev.get("count", 0)))
                elif kind == "roulette":
                    roulette.offer(ev.get("player"), len(ev.get("cards") or ()))
                elif kind == "uno":
                    called.add(ev.get("player"))
                elif kind == "eliminated":
                    knocked.add(ev.get("player"))
                    by = _knocker(ev, events[i - 1] if i else None, step["player"], stack_by)
                    if by is not None:
                        knockouts[by] = knockouts.get(by, 0) + 1
            for player, cards in step["hands"].items():
                if cards > held.get(player, 0):
                    held[player] = cards
        for player, cards in held.items():
            if player not in knocked:
                escape.offer(player, cards, mercy_limit=rnd["mercy_limit"])
        for seat in rnd["seats"]:
            pid = seat["id"]
            streak[pid] = streak.get(pid, 0) + 1 if pid in called else 0
            uno_best.offer(pid, streak[pid])
    ko = _Best()
    for player in names:  # in the order they first sat: the first to reach the most keeps it
        ko.offer(player, knockouts.get(player, 0))
    awards = [stack.award("biggest_stack"), roulette.award("biggest_roulette"), ko.award("knockouts"),
              escape.award("closest_escape"), uno_best.award("uno_streak")]
    players = [{"id": pid, "name": name, "bot": bots[pid], "rounds_won": rounds_won.get(pid, 0),
                "matches_won": matches_won.get(pid, 0), "knockouts": knockouts.get(pid, 0)}
               for pid, name in names.items()]
    if hue is not None:
        for p in players:
            p["hue"] = hue(p["id"], p["name"])
    players.sort(key=lambda p: (-p["matches_won"], -p["rounds_won"]))  # stable: seat order on ties
    return {"rounds": len(rounds), "matches": sum(1 for r in rounds if r["match_over"]),
            "players": players, "awards": [a for a in awards if a is not None],
            "bots_vs_people": score,
            # the newest round told: a client waiting for the round that just ended to be written
            "last": {"match": rounds[-1]["match"], "round": rounds[-1]["number"]} if rounds else None,
            # the newest round's key moments: the big screen replays them between rounds
            "moments": key_moments(rounds[-1]) if rounds else []}
