"""A round's record: seed + rules + seats + every applied action with its time.

``replay(record)`` rebuilds the state by applying the actions in order; because the engine is
deterministic, the result equals the state the server held. ``digest`` gives a short stable
fingerprint of a state for golden tests and cross-process checks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from .actions import Action
from .game import apply, new_game
from .rules import make_rules
from .state import GameState

RECORD_VERSION = 1


@dataclass(frozen=True, slots=True)
class Step:
    player: str | None
    action: Action
    now_ms: int


@dataclass(frozen=True, slots=True)
class Record:
    players: tuple[str, ...]
    rules: dict[str, Any]
    seed: str
    dealer: int
    scores: tuple[int, ...]
    start_ms: int
    steps: tuple[Step, ...] = field(default=())

    def add(self, player: str | None, action: Action, now_ms: int) -> Record:
        return Record(self.players, self.rules, self.seed, self.dealer, self.scores,
                      self.start_ms, (*self.steps, Step(player, action, now_ms)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION, "players": list(self.players), "rules": self.rules,
            "seed": self.seed, "dealer": self.dealer, "scores": list(self.scores),
            "start_ms": self.start_ms,
            "steps": [[s.player, s.action.to_wire(), s.now_ms] for s in self.steps],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        if d.get("version") != RECORD_VERSION:
            raise ValueError(f"unsupported record version {d.get('version')!r}")
        # a step may carry more after its time (the server keeps the message id there)
        steps = tuple(Step(p, Action.from_wire(a), int(t)) for p, a, t, *_ in d["steps"])
        return cls(tuple(d["players"]), d["rules"], d["seed"], int(d["dealer"]),
                   tuple(d["scores"]), int(d["start_ms"]), steps)


def start(record: Record) -> GameState:
    rules = make_rules(record.rules)
    return new_game(record.players, rules, record.seed, dealer=record.dealer,
                    scores=record.scores, now_ms=record.start_ms).state


def replay(record: Record) -> GameState:
    """The state after every step of ``record`` (raises if a step is illegal: a corrupt record)."""
    state = start(record)
    for step in record.steps:
        state = apply(state, step.player, step.action, step.now_ms).state
    return state


def digest(state: GameState) -> str:
    """A stable fingerprint of the whole state."""
    blob = json.dumps(state.to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
