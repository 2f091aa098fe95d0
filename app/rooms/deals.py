"""A deal played again (issue #47): after a round, the host deals the next round from the
finished round's seed, with its rules and its dealer, so every seat gets the hand it had and
the same first card turns up (engine ``new_game`` deals from the seed, the seat count and the
dealer alone).

The seed was revealed when the round ended (``game.deal_seed``), so the replayed round's
commitment (the seed's hash) is known to all from its start: a replay is a replay, everyone at
the table may remember the hands. What the fair deal promises still holds: the server cannot
pick the cards, they are the finished round's.

The replayed round's record names its original (``replayed_from``: its uid, match and round),
and the history links rounds dealt from one seed (``app/history/reads.py``).

A deal shared with another room: the host of that room picks it in the lobby (``use_deal``,
read from the database by ``app/api/deals.py`` outside the room's inbox, then handed here);
the room takes the deal's rules, and its next ``start`` deals from the deal's seed and dealer
if it has as many seats as the deal had hands (else ``deal_mismatch``, nothing changed). The
seed is kept in the room document only, never in a view, until that round is over.
"""

from __future__ import annotations

from typing import Any

from app.core.protocol import Err
from app.rooms import lobby
from app.rooms.events import RoomEventKind, room_event
from app.rooms.lobby import _deal, _seat_spectators, _verify_can_deal
from app.rooms.model import LOBBY, MATCH_OVER, MAX_SEATS, ROUND_OVER, Loaded, Room
from app.rooms.outcomes import NoChange, Refused
from engine import Event, RulesError, make_rules


def seats_at_next_deal(room: Room) -> int:
    """The seats a deal now would go to: the room's, and the waiting spectators who take free
    ones (screens never do)."""
    waiting = sum(not s.screen for s in room.spectators)
    return len(room.seats) + min(waiting, MAX_SEATS - len(room.seats))


def finished_deal(room: Room) -> dict[str, Any]:
    """What a replay of the round on the table needs, and its name in the record."""
    record = room.record
    assert record is not None
    return {"seed": record["seed"], "dealer": int(record["dealer"]), "seats": len(record["players"]),
            "rules": room.record_rules(),
            "from": {"uid": f"{room.code}:{room.round}:{record['start_ms']}", "match": room.match,
                     "round": room.round}}


def replay_deal(loaded: Loaded, player: str, now_ms: int) -> list[Event]:
    """``replay_deal``: the host, after a round (``round_over`` or ``match_over``), deals the
    next round from the finished round's deal. The match goes on as after ``rematch`` (from
    ``match_over`` a new one begins); waiting spectators sit down first, and the seats must
    then be as many as the deal was dealt to (``deal_mismatch``: a hand per seat, none
    missing, none made up). Nothing changes when it is refused."""
    room = loaded.room
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can deal a round again")
    if room.status not in (ROUND_OVER, MATCH_OVER) or room.record is None:
        raise Refused(Err.NOT_OVER, "a deal is played again once its round is over")
    deal = finished_deal(room)
    seats = seats_at_next_deal(room)
    if seats != deal["seats"]:
        raise Refused(Err.DEAL_MISMATCH, f"that deal was dealt to {deal['seats']} seats, "
                      f"the next round would have {seats}")
    if deal["rules"] != room.rules:  # (the rules change only in the lobby: a safeguard)
        raise Refused(Err.DEAL_MISMATCH, "the room's rules are not that deal's")
    _verify_can_deal(room)
    events = _seat_spectators(room)
    if room.status == MATCH_OVER:  # a new match, as after rematch
        room.scores = {}
        room.match += 1
        room.round = 0
    room.scores = {s.id: room.scores.get(s.id, 0) for s in room.seats}
    return events + _deal(loaded, dealer=deal["dealer"], now_ms=now_ms, seed=deal["seed"],
                          replayed_from=deal["from"])


def use_deal(loaded: Loaded, digest: str, deal: dict[str, Any] | None) -> list[Event]:
    """The host (the member whose token hashes to ``digest``) picks a shared ``deal`` for the
    next ``start``, in the lobby; None drops the one picked. The room takes the deal's rules
    (announced as ``rules_changed`` with ``deal``); its seat count and rules are checked at
    the start, as seats still come and go in the lobby."""
    room = loaded.room
    member = room.member_by_token(digest)
    if member is None or member.id != room.host:
        raise Refused(Err.NOT_HOST, "only the host picks the deal")
    if room.status != LOBBY:
        raise Refused(Err.NOT_IN_LOBBY, "a deal is picked in the lobby")
    if deal is None:
        if room.deal is None:
            raise NoChange
        room.deal = None
        return [room_event(RoomEventKind.RULES_CHANGED, rules=room.rules, deal=None)]
    if room.deal is not None and room.deal["id"] == deal["id"]:
        raise NoChange
    try:
        rules = make_rules(deal["rules"]).to_dict()
    except RulesError as exc:  # a deal of an older server whose rules this one no longer takes
        raise Refused(Err.DEAL_MISMATCH, f"this server cannot deal under that deal's rules: {exc.message}"
                      ) from None
    if not 2 <= deal["seats"] <= MAX_SEATS or not 0 <= deal["dealer"] < deal["seats"]:
        raise Refused(Err.DEAL_MISMATCH, "that deal cannot be dealt here")
    room.rules = rules
    room.deal = {"id": deal["id"], "seed": deal["seed"], "dealer": deal["dealer"], "seats": deal["seats"],
                 "rules": rules}
    picked = {"id": deal["id"], "seats": deal["seats"]}
    return [room_event(RoomEventKind.RULES_CHANGED, rules=room.rules, deal=picked)]


def start(loaded: Loaded, player: str, now_ms: int) -> list[Event]:
    """``start``: from the shared deal the host picked, if any (as ``lobby.start`` otherwise).
    The seats must be as many as the deal's hands once the waiting spectators sit down, and
    the rules the deal's (picking it set them; the host may have changed them since)."""
    room = loaded.room
    deal = room.deal
    if deal is None:
        return lobby.start(loaded, player, now_ms)
    if room.host != player:
        raise Refused(Err.NOT_HOST, "only the host can do that")
    if room.status != LOBBY:
        raise Refused(Err.NOT_IN_LOBBY, "only in the lobby")
    seats = seats_at_next_deal(room)
    if seats != deal["seats"]:
        raise Refused(Err.DEAL_MISMATCH, f"the deal you picked has {deal['seats']} hands; "
                      f"this room has {seats} seats")
    if room.rules != deal["rules"]:
        raise Refused(Err.DEAL_MISMATCH, "the rules were changed since the deal was picked: "
                      "pick it again, or drop it")
    _verify_can_deal(room)
    events = _seat_spectators(room)
    if room.match_open:  # back from a round of this match: its next round
        room.match_open = False
        room.scores = {s.id: room.scores.get(s.id, 0) for s in room.seats}
    else:
        room.round = 0
        room.match += 1
        room.scores = {s.id: 0 for s in room.seats}
    room.deal = None
    return events + _deal(loaded, dealer=deal["dealer"], now_ms=now_ms, seed=deal["seed"],
                          replayed_from={"deal": deal["id"]})
