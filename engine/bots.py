"""Bot policies that decide only from what their seat may know: its own ``view_for`` (which
carries the seat's legal moves) and the public events. They never touch the game state.

``easy`` plays uniformly at random over its legal moves, resolves its own choices (it never
cancels), and now and then forgets to call UNO.
"""

from __future__ import annotations

import random
from typing import Any

from .actions import DRAW, PASS, UNO, Action, ActionKind

#: Every bot level, weakest first: the levels a room may add (protocol.md ``add_bot``) and
#: :func:`engine.ai.make_bot` builds.
BOT_LEVELS: tuple[str, ...] = ("easy", "normal", "hard")

EASY_FORGETS_UNO = 0.25


def easy_move(view: dict[str, Any], me: str, rng: random.Random) -> Action | None:
    """A uniformly random legal move for ``me``, or ``None`` when there is nothing to do."""
    game = view.get("game")
    if not game or game.get("winner") is not None:
        return None
    legal = game.get("legal")
    if not legal:
        return None
    moves: list[Action] = []
    moves += [Action(ActionKind.PLAY, card) for card in legal["play"]]
    if legal["draw"]:
        moves.append(DRAW)
    if legal["pass"]:
        moves.append(PASS)
    pending = game.get("pending")
    if legal["choose"] and pending:
        choice = pending["choice"]
        field = choice if choice in ("target", "top") else "color"
        moves += [Action(ActionKind.CHOOSE, **{field: value}) for value in legal["choose"]]
    moves += [Action(ActionKind.CATCH, target=t) for t in legal["catch"]]
    if legal["uno"] and rng.random() >= EASY_FORGETS_UNO:
        return UNO
    if not moves:
        return None
    move = rng.choice(moves)
    if move.kind is ActionKind.PLAY and len(view["hand"]) == 2 and rng.random() >= EASY_FORGETS_UNO:
        move = move._replace(uno=True)
    return move
