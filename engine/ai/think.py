"""A bot's decision as one value, so it can be made anywhere: on the server's event loop, or in
a worker process that shares nothing with it.

A :class:`Thought` holds exactly what the bot deciding in place would read: its seat's view (which
carries its legal moves), its own memory of the events its seat received, the rules, a seed for
its randomness and its time budget. :func:`think` is the bot's ``decide`` on those, and only
those: what the seat may not know cannot be in the request, so it cannot reach the worker.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..actions import Action
from ..rules import Rules
from . import make_bot
from .memory import Memory


@dataclass(frozen=True)
class Thought:
    level: str
    me: str
    rules: Rules
    memory: Memory  # a copy: the worker's decision must not change the caller's bot
    view: dict[str, Any]
    seed: str  # the decision's randomness: same thought, same seed, same move (within budget)
    budget_ms: float  # the ``hard`` search's time; other levels decide at once
    options: dict[str, Any] = field(default_factory=dict)  # the search's other knobs (make_bot)


def think(thought: Thought) -> Action | None:
    """The move a bot of ``thought.level`` makes from what ``thought`` holds."""
    bot = make_bot(thought.level, thought.me, thought.rules, **{**thought.options,
                                                                 "budget_ms": thought.budget_ms})
    memory = getattr(bot, "memory", None)
    if memory is not None:
        bot.memory = thought.memory  # type: ignore[attr-defined]
    return bot.decide(thought.view, random.Random(thought.seed))
