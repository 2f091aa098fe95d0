"""A finished round dealt again from its seed (protocol.md "Fair deal"; ``mercyless verify`` and
``GET /api/rounds/{id}/verify``).

The record keeps the seed, the rules, the seat order, the dealer, the scores carried in and
every action. The hands are not stored apart: they are what the seed deals. So the check is:
the seed hashes to the commitment shown at the deal (where one is claimed), deals the first top
card and the starting hands claimed (where claimed), every recorded action is legal on the deal
it makes, and playing them all out ends as the record says (winner, cards left, scores). A seed
changed afterwards deals other hands, on which the recorded plays do not follow.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker

from app.history.models import Round
from app.history.reads import load_round, round_summary
from engine import EngineError, Record, apply
from engine.fairdeal import deal_commitment
from engine.record import start as deal_round

#: A claimed hand or list of steps longer than this is not a round's (bad input, not a check).
MAX_STEPS = 100_000


class BadRecord(ValueError):
    """Not a round's record at all (the CLI's exit 2, the endpoint's 409)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    ok: bool
    problems: tuple[str, ...]  # what differs, one sentence each
    checked: tuple[str, ...]  # what was compared
    seed: str
    commitment: str
    top: str
    hands: dict[str, list[str]]

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "problems": list(self.problems), "checked": list(self.checked),
                "seed": self.seed, "deal_commitment": self.commitment, "top": self.top,
                "hands": self.hands}


def parse_record(data: Any) -> tuple[Record, dict[str, Any]]:
    """The record and what is claimed about it from a JSON document: a bare record (engine
    ``Record.to_dict()``, as the database keeps it) or what ``/verify`` answers (``record``,
    ``round``: the summary with its seats, ``deal``: a commitment, top card, hands)."""
    if not isinstance(data, dict):
        raise BadRecord("not a round record: expected a JSON object")
    claims: dict[str, Any] = {}
    if "record" in data:
        claims["round"] = data.get("round") if isinstance(data.get("round"), dict) else None
        claims["deal"] = data.get("deal") if isinstance(data.get("deal"), dict) else None
        data = data["record"]
    if not isinstance(data, dict):
        raise BadRecord("not a round record: 'record' is not an object")
    try:
        record = Record.from_dict(data)
        if not isinstance(record.seed, str) or not record.seed or len(record.steps) > MAX_STEPS:
            raise ValueError("no seed")
    except (KeyError, TypeError, ValueError, AttributeError, EngineError) as bad:
        raise BadRecord(f"not a round record: {bad}") from None
    return record, claims


def _hand(cards: Any) -> Any:
    """A claimed hand, sorted to compare; anything but a list of cards as it is (it differs)."""
    return sorted(cards) if isinstance(cards, list) and all(isinstance(c, str) for c in cards) else cards


def _cards(cards: Any) -> str:
    hand = _hand(cards)
    return " ".join(hand) if isinstance(hand, list) and hand is not cards else repr(cards)


def verify(record: Record, *, deal: dict[str, Any] | None = None,
           outcome: dict[str, Any] | None = None) -> Verdict:
    """Deal ``record`` again from its seed and compare. ``deal``: what was shown at the deal
    (``deal_commitment``, ``top``, ``hands``: player id -> cards); ``outcome``: the round's
    summary as stored (``winner``, ``seats``: ``id``, ``name``, ``final_cards``, ``score``)."""
    deal = deal or {}
    outcome = outcome or {}
    seats = outcome.get("seats") if isinstance(outcome.get("seats"), list) else []
    names = {s["id"]: s.get("name") for s in seats if isinstance(s, dict) and isinstance(s.get("id"), str)}

    def who(pid: str) -> str:
        return f"{names[pid]} ({pid})" if isinstance(pid, str) and names.get(pid) else str(pid)

    try:
        state = deal_round(record)
    except (EngineError, ValueError, TypeError, KeyError, AttributeError) as bad:
        raise BadRecord(f"the record's rules or seats deal no round: {bad}") from None
    commitment = deal_commitment(record.seed)
    top = state.discard[-1]
    hands = {pid: sorted(state.hands[i]) for i, pid in enumerate(record.players)}
    problems: list[str] = []
    checked: list[str] = []
    if deal.get("seed") is not None:
        checked.append("seed")
    if deal.get("seed") is not None and deal["seed"] != record.seed:
        problems.append(f"the seed differs: round {deal['seed']}, its record {record.seed}")
    if deal.get("deal_commitment") is not None:
        checked.append("commitment")
        claimed = str(deal["deal_commitment"]).lower()
        if claimed != commitment:
            problems.append(f"the seed does not hash to the commitment shown at the deal: "
                            f"record {claimed[:16]}…, the seed hashes to {commitment[:16]}…")
    if deal.get("top") is not None:
        checked.append("top card")
        if deal["top"] != top:
            problems.append(f"the first top card differs: record {deal['top']}, seed deals {top}")
    claimed_hands = deal.get("hands")
    if isinstance(claimed_hands, dict):
        checked.append("starting hands")
        for pid in record.players:
            if pid in claimed_hands and _hand(claimed_hands[pid]) != hands[pid]:
                problems.append(f"{who(pid)}'s starting hand differs: record {_cards(claimed_hands[pid])}, "
                                f"seed deals {_cards(hands[pid])}")
    checked.append("every action")
    for n, step in enumerate(record.steps, start=1):
        try:
            state = apply(state, step.player, step.action, step.now_ms).state
        except (EngineError, ValueError, TypeError, KeyError, IndexError) as refused:
            wire = step.action.to_wire()
            what = " ".join(str(v) for k, v in wire.items() if k in ("type", "card"))
            code = getattr(refused, "code", None)
            by = who(step.player) if step.player else "the server"
            problems.append(f"step {n} ({by}: {what}) does not "
                            f"follow from the seed's deal ({getattr(code, 'value', refused)})")
            break
    else:
        _compare_outcome(record, state, outcome, who, problems, checked)
    return Verdict(not problems, tuple(problems), tuple(checked), record.seed, commitment, top, hands)


def _compare_outcome(record: Record, state: Any, outcome: dict[str, Any], who: Any,
                     problems: list[str], checked: list[str]) -> None:
    if "winner" in outcome:
        checked.append("winner")
        dealt = record.players[state.winner] if state.winner is not None else None
        if outcome["winner"] != dealt:
            problems.append(f"the winner differs: record {outcome['winner']}, the seed's round {dealt}")
    listed = outcome.get("seats") if isinstance(outcome.get("seats"), list) else []
    seats = [s for s in listed
             if isinstance(s, dict) and isinstance(s.get("id"), str) and s["id"] in record.players]
    if seats:
        checked.append("cards left and scores")
    for seat in seats:
        i = record.players.index(seat["id"])
        if "final_cards" in seat and seat["final_cards"] != len(state.hands[i]):
            problems.append(f"{who(seat['id'])}'s cards at the end differ: record {seat['final_cards']}, "
                            f"the seed's round {len(state.hands[i])}")
        if "score" in seat and seat["score"] != state.scores[i]:
            problems.append(f"{who(seat['id'])}'s score differs: record {seat['score']}, "
                            f"the seed's round {state.scores[i]}")


async def verify_stored(sessions: async_sessionmaker,
                        public_id: str) -> tuple[Verdict, dict[str, Any]] | None:
    """The stored round ``public_id`` checked (``None``: no such round), with the document
    :func:`verify_document` checks again offline (``record``, ``round``, ``deal``)."""
    row = await load_round(sessions, public_id)
    if row is None:
        return None
    return await asyncio.to_thread(verify_row, row)


def verify_row(row: Round) -> tuple[Verdict, dict[str, Any]]:
    """A round row checked: its record against its own seed column and its summary."""
    try:
        data = json.loads(row.record.record)
    except (ValueError, AttributeError) as bad:
        raise BadRecord(f"the round's record is not readable: {bad}") from None
    record, _ = parse_record(data)
    summary = round_summary(row)
    verdict = verify(record, deal={"seed": row.seed}, outcome=summary)
    deal = {"deal_commitment": verdict.commitment, "top": verdict.top, "hands": verdict.hands}
    return verdict, {"round": summary, "record": data, "deal": deal}


def verify_document(data: Any) -> Verdict:
    """:func:`verify` on a JSON document as :func:`parse_record` reads it."""
    record, claims = parse_record(data)
    return verify(record, deal=claims.get("deal"), outcome=claims.get("round"))
