"""``view_for`` (one viewer) and ``views_for`` (a whole table at once, the public part shared):
the one choke point that turns a game state into what a player may see.

It builds exactly the ``players``, ``hand`` and ``game`` parts of protocol.md's VIEW. Another
player's cards, the draw pile's order and the seed never leave here; a spectator (``None``)
gets no hand. Two additions the contract allows: ``game.legal`` (what this viewer may do now,
so a client never decides legality itself) and ``game.drawn`` (the card a draw rule says the
viewer must or may play), both only in the viewer's own copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from ._members import A_CATCH, A_CHOOSE, A_PLAY
from .cards import LETTER_TO_NAME
from .fairdeal import deal_commitment
from .legal import legal_actions
from .state import GameState


class SeatInfo(NamedTuple):
    """What the room knows of a seat that the game does not: shown in ``players``."""

    name: str
    bot: bool = False
    connected: bool = True
    level: str | None = None  # a bot's level (an addition to protocol.md's players entries)
    hue: int | None = None  # a bot's avatar colour (an addition too)
    away: bool = False  # a person's seat a bot plays until they are back (an addition too)


def view_for(s: GameState, player: str | None, table: Mapping[str, SeatInfo] | None = None,
             now_ms: int | None = None) -> dict[str, Any]:
    """What ``player`` (``None``, or anyone not seated: a spectator) may see of ``s``.

    The view's hand is a copy: bots and tools get this view, and the state's own list must not
    be theirs to change (the server's fan-out, which shares it, treats views as read-only)."""
    view = views_for(s, (player,), table, now_ms)[player]
    if view["hand"]:
        view["hand"] = list(view["hand"])
    return view


#: The keys of a view's ``game`` that may be the viewer's own (see :func:`table_views`); every
#: other key of it holds the public value, the same object in every view built together.
OWN_GAME_KEYS = ("pending", "legal", "drawn")


def views_for(s: GameState, viewers: Iterable[str | None], table: Mapping[str, SeatInfo] | None = None,
              now_ms: int | None = None) -> dict[str | None, dict[str, Any]]:
    """``view_for`` of each viewer, equal to it, built for a whole table at once.

    The public part is built once and shared: every view holds the same ``players`` list and
    the same values inside ``game``, and only a seat's own parts (``hand``, ``game.legal``,
    ``game.drawn``, ``game.pending.card``) are its own. Readers must treat views as read-only;
    the server's differ uses the sharing to diff a public part once per fan-out."""
    return table_views(s, viewers, table, now_ms)[1]


def table_views(s: GameState, viewers: Iterable[str | None], table: Mapping[str, SeatInfo] | None = None,
                now_ms: int | None = None, top: Mapping[str, Any] | None = None
                ) -> tuple[dict[str, Any], dict[str | None, dict[str, Any]]]:
    """:func:`views_for`'s views and the public ``game`` they were built from (a spectator's):
    each view's ``game`` holds that dict's own values under every key but
    :data:`OWN_GAME_KEYS`, so what changed in those keys between two such tables is the same
    for every viewer. ``top``: parts the caller adds to every view, first (the server's
    ``room``), the same objects in each.

    A seat's ``hand`` is the state's own list: the engine never changes a state's list in
    place (copy-on-write, ``GameState.clone``), so a hand that did not change between two
    states is the same object in both tables, which the server's differ takes as unchanged
    without comparing it."""
    players, game = _public(s, table)
    top = top or {}
    spectator = {**top, "players": players, "hand": [], "game": game}
    out: dict[str | None, dict[str, Any]] = {}
    seats = s.players
    hands = s.hands
    pending = s.pending
    for viewer in viewers:
        seat = s.seat_of(viewer) if viewer is not None else None
        if seat is None:
            out[viewer] = spectator
            continue
        # the viewer's own parts of ``game``: what they may do, the card they drew, the card
        # their pending choice is about (a new ``pending`` dict: the public one is shared)
        own = dict(game)
        if pending is not None and pending.player == seat:
            own["pending"] = {**game["pending"], "card": pending.card}
        own["legal"] = _legal_hint(s, seats[seat], now_ms)
        if s.turn == seat and s.drawn is not None and s.winner is None:
            own["drawn"] = s.drawn
        out[viewer] = {**top, "players": players, "hand": hands[seat], "game": own}
    return game, out


def _public(s: GameState, table: Mapping[str, SeatInfo] | None
            ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``players`` and ``game`` parts every viewer may see (a spectator's whole view)."""
    ids = s.players
    # comprehensions over zip(): the server builds views on every action, bots one per move
    if table is None:
        players = [{"id": pid, "name": pid, "bot": False, "connected": True, "cards": len(hand),
                    "eliminated": out, "uno": uno, "score": score}
                   for pid, hand, out, uno, score in zip(
                       ids, s.hands, s.eliminated, s.uno, s.scores, strict=True)]
    else:
        players = [{"id": pid, "name": info.name if info else pid, "bot": info.bot if info else False,
                    "connected": info.connected if info else True, "cards": len(hand),
                    "eliminated": out, "uno": uno, "score": score, "level": info.level if info else None,
                    "hue": info.hue if info else None, "away": info.away if info else False}
                   for pid, hand, out, uno, score, info in zip(
                       ids, s.hands, s.eliminated, s.uno, s.scores, map(table.get, ids), strict=True)]
    winner = s.winner
    over = winner is not None
    pending = s.pending
    game: dict[str, Any] = {
        "top": s.discard[-1],
        "color": LETTER_TO_NAME[s.color],
        "direction": s.direction,
        "turn": None if over else ids[s.turn],
        "turn_deadline": s.turn_deadline,
        "stack": {"total": s.stack_total, "last": s.stack_last, "target": ids[s.turn]}
        if s.stack_last else None,
        "pending": None if pending is None else {"player": ids[pending.player],
                                                 "choice": pending.choice.value},
        "draw_pile": len(s.draw_pile),
        "discard_pile": len(s.discard),
        "set_aside": len(s.set_aside),
        "exposed": [{"player": ids[who], "until": until} for who, until in s.exposed],
        "dealer": ids[s.dealer],
        "winner": ids[winner] if over else None,
        "deal_commitment": deal_commitment(s.seed),
    }
    if over:
        game["deal_seed"] = s.seed  # the round is over: anyone may now deal it again
        game["revealed"] = {pid: list(h)
                            for pid, h, out in zip(ids, s.hands, s.eliminated, strict=True) if not out}
        game["points"] = s.points
        game["reason"] = s.end_reason
    return players, game


#: The hint of a viewer who may do nothing now (most seats, most of the time): one object, so
#: that the server's differ finds it unchanged by identity. Views are read-only.
_NO_HINT: dict[str, Any] = {"play": [], "draw": False, "pass": False, "choose": [], "cancel": False,
                            "uno": False, "catch": []}


def _legal_hint(s: GameState, player: str, now_ms: int | None) -> dict[str, Any]:
    actions = legal_actions(s, player, now_ms)
    if not actions:
        return _NO_HINT
    play: list[str] = []
    choose: list[str | None] = []
    catch: list[str | None] = []
    hint: dict[str, Any] = {"play": play, "draw": False, "pass": False, "choose": choose,
                            "cancel": False, "uno": False, "catch": catch}
    for a in actions:
        kind = a.kind
        if kind is A_PLAY:
            play.append(a.card)  # type: ignore[arg-type]
        elif kind is A_CHOOSE:
            choose.append(a.color or a.target or a.top)
        elif kind is A_CATCH:
            catch.append(a.target)
        else:
            hint[kind.value] = True
    return hint
