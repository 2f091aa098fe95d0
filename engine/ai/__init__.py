"""Bot players. Every bot decides only from what its seat may know: its own view (``view_for``
of its seat, which carries its legal moves) and the public events as its seat receives them.
None of them is ever handed a :class:`~engine.GameState`.

- ``easy``: uniform over the legal moves; forgets UNO now and then.
- ``normal``: a heuristic player (see :mod:`engine.ai.normal`).
- ``hard``: Monte Carlo search over determinizations consistent with what the seat has seen
  (see :mod:`engine.ai.hard`), time-bounded per decision.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from ..actions import Action
from ..bots import BOT_LEVELS, easy_move
from ..rules import Rules
from .hard import HardBot
from .memory import Memory
from .normal import NormalBot


class Bot(Protocol):
    level: str

    def observe(self, events: list[dict[str, Any]]) -> None: ...

    def decide(self, view: dict[str, Any], rng: random.Random) -> Action | None: ...


class EasyBot:
    level = "easy"

    def __init__(self, me: str, rules: Rules) -> None:
        self.me = me

    def observe(self, events: list[dict[str, Any]]) -> None:
        pass

    def decide(self, view: dict[str, Any], rng: random.Random) -> Action | None:
        return easy_move(view, self.me, rng)


def make_bot(level: str, me: str, rules: Rules, **options: Any) -> Bot:
    """A bot of ``level`` (one of :data:`~engine.bots.BOT_LEVELS`; anything else makes an
    ``easy`` one) for the seat ``me``; ``options`` tune the ``hard`` bot's search."""
    if level == "normal":
        return NormalBot(me, rules)
    if level == "hard":
        return HardBot(me, rules, **options)
    return EasyBot(me, rules)


__all__ = ["BOT_LEVELS", "Bot", "EasyBot", "HardBot", "Memory", "NormalBot", "make_bot"]
