"""``hard``: flat Monte Carlo search over determinizations.

For each decision it samples worlds consistent with what the seat has seen
(:mod:`engine.ai.determinize`, which also keeps a player's older cards out of the colours they
showed they lacked by drawing, each such void for the cards held when it was formed, and out of
a Discard All's colour; :mod:`engine.ai.memory` moves these beliefs with swapped and passed
hands), plays every candidate move in each world (the same worlds, and the same randomness after
the move, for every candidate, so they are compared on equal footing) and plays the rest of the
round with the ``normal`` heuristic for every seat (:func:`engine.ai.rollout.guided_action`), up
to a horizon of 30 actions (about a third of a round: at equal worlds it read at least as strong
as 60, at half the cost). A world's value for the seat is 1 for a win, 0 for being knocked out,
and in between by how its hand compares with the others' when the horizon is reached
(``leaf="fitted"``: by a model fitted on self-play). The candidate with the best mean wins; the
search stops before a world that would overrun its time budget. Out-of-turn calls (UNO, catches)
and choices it has no time for are made the ``normal`` way. ``colors`` also searches the colour
a wild names, each colour the hand holds after the card, and ``targets`` a 7's swap partner,
every other active player; both are on by default from a budget of ``WIDE_BUDGET_MS``: at 85 ms
of CPU time a decision and up to 64 worlds they took ``printed`` from 44.6% to 45.3% and
``mercyless`` from 47.8% to 49.0%, at 40 ms they lost (docs/benchmarks.md "Bot tournament").
``halving=True`` spends the same rollouts by successive halving (:meth:`HardBot._halve`) instead
of evenly (no gain measured at 400 games). ``lacks=True`` also keeps a player's older cards from
answering a stack they took (memory's ``lacks``; no gain measured at 400 games).
``void_color=True`` has a wild name a colour the next player showed they lack (no gain measured
at 400 games). ``model=True`` deals a player's sampled hand again (up to ``model_tries`` times)
while the cards they played since they last got one would not have been the ``normal``
heuristic's choices from it (:mod:`engine.ai.model`). ``draws=False`` leaves a draw out of the
search when a card may be played and no stack is aimed at the seat. ``gate=z`` replaces the
``normal`` move's head start by a paired test: the best candidate is played only if it beats the
``normal`` move by ``z`` standard errors of their world-by-world difference. The search is
bounded by the process's CPU time (``clock="cpu"``, ``time.process_time``): the same budget then
buys the same worlds on a busy machine, which is how a tournament compares searches bounded by
time, and how a server's worker (in the idle scheduling class) gets the search that was measured;
it also stops at ``wall_ms`` of wall clock (three budgets), so a starved worker's table does not
wait long. ``clock="wall"`` bounds it by the wall clock alone (a search on the server's loop).
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from ..actions import Action, ActionKind
from ..cards import CARD_INFO, COLOR_LETTERS, LETTER_TO_NAME
from ..errors import IllegalAction
from ..game import apply
from ..rules import Rules
from ..state import GameState
from .determinize import determinize
from .normal import NormalBot
from .rollout import POLICIES, play_out

# The search the server's hard seats make (HARD_BOT_BUDGET_MS) and the tournament measures by
# default: 85 ms of CPU time a decision, up to 64 worlds, the wild's colour and the 7's partner
# searched too (WIDE_BUDGET_MS): `printed` 45.3%, `mercyless` 49.0% against three `normal` bots
# over 2,000 games each, where 40 ms read 42.5% under `printed` (docs/benchmarks.md)
SEARCH_BUDGET_MS = 85.0
SEARCH_WORLDS = 64
# A search timed by CPU time also stops at this many times its budget of wall clock: on a
# machine busy enough to stretch it that far, its table does not wait for it
WALL_FACTOR = 3.0
PRIOR = 0.05  # the head start of the heuristic's own choice, per sampled world
# From this budget a wild's colour and a 7's partner are searched by default: at 85 ms of CPU time
# they won more (printed 45.3% against 44.6%, mercyless 49.0% against 47.8%), at 40 ms less (printed
# 40.6% against 42.5% over 2,000 games), where the extra candidates leave too few worlds each
WIDE_BUDGET_MS = 60.0

# The leaf's model of "who wins from here": each active player's chance is a softmax over them of
# W_CUBE * (cards / mercy limit)^3 + W_INV / (cards + 1) + W_ONE * [one card or none], plus, for
# the player a stack is aimed at, W_STACK * stack / limit + W_OVER * [taking it knocks them out].
# Fitted (multinomial log loss) on 107,559 positions of 4,000 rounds of `normal` self-play,
# mercyless (the two presets play the same rounds for bots that never draw by choice):
# held-out log loss 1.0788 against 1.0859 for a uniform guess (the hand-size lead it replaces:
# 1.104, worse than uniform). Few cards count, many cards count only near the limit.
W_CUBE, W_INV, W_ONE, W_STACK, W_OVER = -0.284, 0.88, 0.239, -0.301, -0.861


def fitted_value(s: GameState, seat: int) -> float:
    """The chance ``seat`` wins the round from ``s``, by the fitted model above."""
    if s.winner is not None:
        return 1.0 if s.winner == seat else 0.0
    if s.eliminated[seat]:
        return 0.0
    limit = s.rules.mercy_limit
    stack = s.stack_total if s.stack_last else 0
    total = mine = 0.0
    for i, hand in enumerate(s.hands):
        if s.eliminated[i]:
            continue
        n = len(hand)
        h = n / limit
        x = W_CUBE * h * h * h + W_INV / (n + 1) + (W_ONE if n <= 1 else 0.0)
        if stack and i == s.turn:
            x += W_STACK * stack / limit + (W_OVER if n + stack >= limit else 0.0)
        e = math.exp(x)
        total += e
        if i == seat:
            mine = e
    return mine / total


class _Budget:
    """A search's time: its own clock (CPU or wall) and the wall clock's bound. The next world
    (or rollout) is begun only if one as long as the longest so far still fits under both."""

    def __init__(self, clock: Any, budget_ms: float, wall_ms: float) -> None:
        self.clock = clock
        self.deadline = clock() + budget_ms / 1000
        self.wall_deadline = time.perf_counter() + wall_ms / 1000
        self.slowest = self.slowest_wall = 0.0

    def begin(self) -> bool:
        """Note the start of one more; whether one as long as the longest so far fits."""
        self.started, self.started_wall = self.clock(), time.perf_counter()
        return (self.started + self.slowest <= self.deadline
                and self.started_wall + self.slowest_wall <= self.wall_deadline)

    def end(self) -> None:
        self.slowest = max(self.slowest, self.clock() - self.started)
        self.slowest_wall = max(self.slowest_wall, time.perf_counter() - self.started_wall)


class HardBot(NormalBot):
    level = "hard"

    def __init__(self, me: str, rules: Rules, *, budget_ms: float = SEARCH_BUDGET_MS, horizon: int = 30,
                 max_worlds: int = SEARCH_WORLDS, policy: str = "guided", crn: bool = True,
                 prior: float = PRIOR, colors: bool | None = None,
                 voids: bool = True, leaf: str = "hands", halving: bool = False,
                 lacks: bool = False, void_color: bool = False, targets: bool | None = None,
                 model: bool = False, model_tries: int = 8, draws: bool = True,
                 gate: float = 0.0, clock: str = "cpu", wall_ms: float | None = None) -> None:
        super().__init__(me, rules)
        self.budget_ms = budget_ms
        self.horizon = horizon
        self.max_worlds = max_worlds
        self.policy = POLICIES[policy]
        self.crn = crn
        self.prior = prior
        # None: searched when the budget has room for the extra candidates (WIDE_BUDGET_MS)
        wide = budget_ms >= WIDE_BUDGET_MS
        self.colors = wide if colors is None else colors
        self.voids = voids
        self.halving = halving
        self.lacks = lacks
        self.void_color = void_color
        self.targets = wide if targets is None else targets
        self.model = model
        self.model_tries = model_tries
        self.draws = draws
        self.gate = gate
        clocks = {"wall": time.perf_counter, "cpu": time.process_time}
        if clock not in clocks:
            raise ValueError(f"clock must be one of {', '.join(clocks)}, not {clock!r}")
        self.clock = clocks[clock]
        # the wall clock's bound on a search timed by CPU time (a busy machine stretches that)
        if wall_ms is None:
            wall_ms = budget_ms if clock == "wall" else WALL_FACTOR * budget_ms
        self.wall_ms = wall_ms
        leaves = {"hands": self._value, "fitted": fitted_value}
        if leaf not in leaves:
            raise ValueError(f"leaf must be one of {', '.join(leaves)}, not {leaf!r}")
        self.leaf = leaves[leaf]

    def decide(self, view: dict[str, Any], rng: random.Random) -> Action | None:
        game = view.get("game")
        if not game or game.get("winner") is not None or not game.get("legal"):
            return None
        legal = game["legal"]
        mine = game["turn"] == self.me if game["pending"] is None else game["pending"]["player"] == self.me
        if legal["catch"] or legal["uno"] or not mine:
            return super().decide(view, rng)
        self.memory.sync(view)
        candidates = self._candidates(view, rng)
        if len(candidates) <= 1:
            return candidates[0] if candidates else super().decide(view, rng)
        search = self._halve if self.halving else self._search
        return search(view, candidates, super().decide(view, rng), rng)

    def _complete(self, view: dict[str, Any], card: str) -> Action:
        """``normal``'s move, but with ``void_color=True`` a wild names a colour the next player
        showed they lack (by drawing), one this hand still holds, if there is one."""
        action = super()._complete(view, card)
        if not self.void_color or action.color is None:
            return action
        nxt = self._next_active(view)["id"]
        void = self.memory.void.get(nxt)
        if not void or self.memory.free.get(nxt, 0) > 1:
            return action
        counts = dict.fromkeys(COLOR_LETTERS, 0)
        rest = list(view["hand"])
        rest.remove(card)
        for c in rest:
            letter = CARD_INFO[c].color
            if letter in counts:
                counts[letter] += 1
        hits = [c for c in COLOR_LETTERS if c in void and counts[c]]
        if not hits:
            return action
        return action._replace(color=LETTER_TO_NAME[max(hits, key=counts.__getitem__)])

    def _candidates(self, view: dict[str, Any], rng: random.Random) -> list[Action]:
        game = view["game"]
        legal = game["legal"]
        out: list[Action] = []
        if legal["choose"]:
            pending = game["pending"]
            field = pending["choice"] if pending["choice"] in ("target", "top") else "color"
            return [Action(ActionKind.CHOOSE, **{field: v}) for v in legal["choose"]]
        for card in legal["play"]:
            action = self._complete(view, card)
            out.append(action)
            if self.colors and action.color is not None:
                # the colour a wild names is a choice as big as the card: each colour the
                # hand holds (after the card leaves it) is searched too
                rest = list(view["hand"])
                rest.remove(card)
                for name in dict.fromkeys(LETTER_TO_NAME[CARD_INFO[c].color] for c in rest
                                          if not CARD_INFO[c].wild):
                    if name != action.color:
                        out.append(action._replace(color=name))
            if self.targets and action.target is not None:
                # a 7's swap partner is searched too: every other active player
                for p in view["players"]:
                    if not p["eliminated"] and p["id"] not in (self.me, action.target):
                        out.append(action._replace(target=p["id"]))
        if legal["draw"] and (self.draws or not out or (game["stack"] or {}).get("target") == self.me):
            out.append(Action(ActionKind.DRAW))
        if legal["pass"]:
            out.append(Action(ActionKind.PASS))
        return out

    def _same(self, a: Action, b: Action) -> bool:
        """Whether candidate ``a`` is the ``normal`` move ``b`` (the target counts once targets
        are searched)."""
        if (a.kind, a.card, a.color) != (b.kind, b.card, b.color):
            return False
        return not self.targets or a.target == b.target

    def _value(self, s: GameState, seat: int) -> float:
        if s.winner is not None:
            return 1.0 if s.winner == seat else 0.0
        if s.eliminated[seat]:
            return 0.0
        mine = len(s.hands[seat])
        others = [len(h) for i, h in enumerate(s.hands) if i != seat and not s.eliminated[i]]
        if not others:
            return 1.0
        best_other = min(others)
        # closer to going out than the best opponent, and far from the mercy limit
        lead = (best_other - mine) / (best_other + mine + 1)
        safety = 1 - mine / s.rules.mercy_limit
        return max(0.0, min(1.0, 0.5 + 0.35 * lead + 0.15 * (safety - 0.5)))

    def _search(self, view: dict[str, Any], candidates: list[Action], prior: Action | None,
                rng: random.Random) -> Action:
        """Mean value per candidate over sampled worlds; the ``normal`` choice gets a small
        head start, so noise alone never talks the search out of a sound move."""
        budget = _Budget(self.clock, self.budget_ms, self.wall_ms)
        totals = [0.0] * len(candidates)
        values: list[list[float]] = [[] for _ in candidates]  # per world, for ``gate``
        worlds = 0
        me = self.me
        while worlds < self.max_worlds:
            if not budget.begin() and worlds:
                break
            try:
                world = determinize(view, me, self.rules, self.memory, rng, self.voids, self.lacks,
                                    self.model_tries if self.model else 0)
            except (ValueError, IndexError, KeyError):
                break
            seat = world.players.index(me)
            worlds += 1
            seed = rng.random()
            for i, action in enumerate(candidates):
                try:
                    s = apply(world, me, action, 0).state
                except IllegalAction:
                    totals[i] -= 1.0
                    values[i].append(-1.0)
                    continue
                # common random numbers: every candidate's rest of the round draws the same
                # randomness, so their difference is the move's, not the dice's
                play_out(s, random.Random(seed) if self.crn else rng, self.horizon, self.policy)
                v = self.leaf(s, seat)
                totals[i] += v
                values[i].append(v)
            budget.end()
        if worlds == 0:
            return prior or candidates[0]
        if self.gate > 0 and prior is not None:
            return self._gated(candidates, prior, totals, values, rng)
        for i, action in enumerate(candidates):
            if prior is not None and self._same(action, prior):
                totals[i] += self.prior * worlds
        best = max(range(len(candidates)), key=lambda i: (totals[i], rng.random()))
        return candidates[best]

    def _gated(self, candidates: list[Action], prior: Action, totals: list[float],
               values: list[list[float]], rng: random.Random) -> Action:
        """``gate`` > 0: the best candidate replaces the ``normal`` move only if its gain over it,
        world by world (paired: the same worlds and randomness), is ``gate`` standard errors
        above nothing."""
        best = max(range(len(candidates)), key=lambda i: (totals[i], rng.random()))
        home = next((i for i, a in enumerate(candidates) if self._same(a, prior)), None)
        if home is None or best == home:
            return candidates[best]
        diffs = [a - b for a, b in zip(values[best], values[home], strict=True)]
        n = len(diffs)
        mean = sum(diffs) / n
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
        return candidates[best] if mean > self.gate * math.sqrt(var / n) else candidates[home]

    def _play(self, world: GameState, seat: int, action: Action, seed: float,
              rng: random.Random) -> float:
        """One candidate's value in one world: the move, then the rollout to the horizon."""
        try:
            s = apply(world, self.me, action, 0).state
        except IllegalAction:
            return -1.0
        play_out(s, random.Random(seed) if self.crn else rng, self.horizon, self.policy)
        return self.leaf(s, seat)

    def _halve(self, view: dict[str, Any], candidates: list[Action], prior: Action | None,
               rng: random.Random) -> Action:
        """Successive halving: the flat search's rollouts (``max_worlds`` per candidate) spent
        in ceil(log2 n) equal rounds; after each round but the last the worse half of the
        candidates (by mean, the ``normal`` choice's head start included) is dropped, and the
        rest are played on more worlds. Survivors have always been played on the same worlds,
        with the same randomness after the move, so their means compare like for like."""
        budget = _Budget(self.clock, self.budget_ms, self.wall_ms)
        n = len(candidates)
        rounds = max(1, math.ceil(math.log2(n)))
        per_round = self.max_worlds * n / rounds
        bonus = [self.prior if prior is not None and self._same(a, prior) else 0.0 for a in candidates]
        worlds: list[tuple[GameState, int, float]] = []
        totals = [0.0] * n
        played = [0] * n
        alive = list(range(n))
        me = self.me

        def score(i: int) -> tuple[float, float]:
            return (totals[i] / played[i] + bonus[i] if played[i] else -2.0, rng.random())

        for r in range(rounds):
            want = len(worlds) + max(1, int(per_round // len(alive)))
            out_of_time = False
            while len(worlds) < want:
                try:
                    world = determinize(view, me, self.rules, self.memory, rng, self.voids, self.lacks,
                                        self.model_tries if self.model else 0)
                except (ValueError, IndexError, KeyError):
                    break
                worlds.append((world, world.players.index(me), rng.random()))
            for i in alive:
                for w in range(played[i], len(worlds)):
                    if not budget.begin() and any(played):
                        out_of_time = True
                        break
                    world, seat, seed = worlds[w]
                    totals[i] += self._play(world, seat, candidates[i], seed, rng)
                    played[i] += 1
                    budget.end()
                if out_of_time:
                    break
            if out_of_time or r == rounds - 1:
                break
            alive = sorted(alive, key=score, reverse=True)[:max(2, (len(alive) + 1) // 2)]
        if not any(played):
            return prior or candidates[0]
        return candidates[max(alive, key=score)]
