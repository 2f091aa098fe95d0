"""Fit the ``hard`` bot's leaf: who wins the round from a position, from `normal` self-play.

``python -m bench.leaf_fit --rounds 4000 --preset mercyless``

Plays rounds with every seat moved by :func:`engine.ai.rollout.guided_action` (the ``normal``
heuristic on the state, as the search's rollouts play), records every position's features for
each active player (:func:`features`) and the round's winner, and fits a softmax over the active
players of a linear score (multinomial log loss, Newton's method). Prints the held-out log loss
of a uniform guess, of the hand sizes alone (the features of ``leaf="fitted"``,
engine/ai/hard.py ``fitted_value``) and of every feature (what the hands hold besides), with
the weights. It asks how much a leaf that reads the hands could know: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import random

import numpy as np

from engine.ai.rollout import guided_action
from engine.cards import CARD_INFO, Kind
from engine.game import apply, new_game
from engine.plays import stackable
from engine.rules import make_rules
from engine.state import GameState

#: The features, in the order of the printed weights; the first five are the hand sizes..
FEATURES = ("cube", "inv", "one", "stack", "over",
            "answer", "draws", "big", "wilds", "skips", "colors", "to_move", "next")
SIZE_FEATURES = FEATURES[:5]
_SKIPS = frozenset({Kind.SKIP, Kind.SKIP_ALL, Kind.REVERSE})


def features(s: GameState, i: int) -> list[float]:
    """Player ``i``'s features in ``s`` (an active player)."""
    hand = s.hands[i]
    n = len(hand)
    limit = s.rules.mercy_limit
    h = n / limit
    mover = s.pending.player if s.pending is not None else s.turn
    aimed = bool(s.stack_last) and i == s.turn
    stack = s.stack_total if aimed else 0
    draws = big = wilds = skips = 0
    colors = set()
    for c in hand:
        info = CARD_INFO[c]
        if info.draw:
            draws += 1
            if info.draw >= 4:
                big += 1
        elif info.wild:
            wilds += 1
        if info.kind in _SKIPS:
            skips += 1
        if not info.wild:
            colors.add(info.color)
    answer = 0.0
    if aimed:
        can = stackable(s)
        answer = 1.0 if any(c in can for c in hand) else 0.0
    return [h * h * h, 1 / (n + 1), 1.0 if n <= 1 else 0.0, stack / limit,
            1.0 if aimed and n + stack >= limit else 0.0, answer, float(draws), float(big),
            float(wilds), float(skips), float(len(colors)), 1.0 if i == mover else 0.0,
            1.0 if i == s.next_active(mover) else 0.0]


def positions(rounds: int, preset: str, seed: int, every: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features (positions x 4 seats x features), a mask of the active seats, the winners."""
    rules = make_rules({"preset": preset, "turn_timer_s": 0})
    players = ["a", "b", "c", "d"]
    xs: list[list[list[float]]] = []
    masks: list[list[bool]] = []
    wins: list[int] = []
    for r in range(rounds):
        rng = random.Random(seed + r)
        s, _ = new_game(players, rules, f"fit{seed + r}")
        mine: list[tuple[list[list[float]], list[bool]]] = []
        for step in range(3000):
            if s.winner is not None:
                break
            if step % every == 0:
                active = [not e for e in s.eliminated]
                mine.append(([features(s, i) if active[i] else [0.0] * len(FEATURES) for i in range(4)],
                             active))
            seat = s.pending.player if s.pending is not None else s.turn
            apply(s, players[seat], guided_action(s, seat, rng), 0, in_place=True)
        if s.winner is None:
            continue
        for x, m in mine:
            xs.append(x)
            masks.append(m)
            wins.append(s.winner)
    return np.array(xs), np.array(masks), np.array(wins)


def loss_grad_hess(w: np.ndarray, x: np.ndarray, mask: np.ndarray, y: np.ndarray):
    z = x @ w
    z = np.where(mask, z, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    n = len(y)
    idx = np.arange(n)
    loss = -np.log(p[idx, y]).mean()
    mean_x = np.einsum("ps,psf->pf", p, x)
    grad = -(x[idx, y] - mean_x).sum(axis=0) / n
    second = np.einsum("ps,psf,psg->fg", p, x, x)
    hess = (second - np.einsum("pf,pg->fg", mean_x, mean_x)) / n
    return loss, grad, hess


def fit(x: np.ndarray, mask: np.ndarray, y: np.ndarray, ridge: float = 1e-4) -> np.ndarray:
    w = np.zeros(x.shape[2])
    for _ in range(30):
        _, g, h = loss_grad_hess(w, x, mask, y)
        step = np.linalg.solve(h + ridge * np.eye(len(w)), g + ridge * w)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=4000)
    ap.add_argument("--preset", default="mercyless")
    ap.add_argument("--seed", type=int, default=50_000)
    ap.add_argument("--every", type=int, default=3, help="record every Nth position of a round")
    args = ap.parse_args()
    x, mask, y = positions(args.rounds, args.preset, args.seed, args.every)
    cut = int(len(y) * 0.75)  # by position order, so held-out rounds are whole rounds
    train, test = slice(0, cut), slice(cut, None)
    uniform = float(np.mean(np.log(mask[test].sum(axis=1))))
    print(f"{len(y)} positions of {args.rounds} rounds ({args.preset}); held-out log loss:")
    print(f"  uniform guess                 {uniform:.4f}")
    sizes = [FEATURES.index(f) for f in SIZE_FEATURES]
    w_sizes = fit(x[train][:, :, sizes], mask[train], y[train])
    print(f"  hand sizes ({len(sizes)} features)      "
          f"{loss_grad_hess(w_sizes, x[test][:, :, sizes], mask[test], y[test])[0]:.4f}")
    w = fit(x[train], mask[train], y[train])
    held_out = loss_grad_hess(w, x[test], mask[test], y[test])[0]
    print(f"  every feature ({len(FEATURES)})         {held_out:.4f}")
    w = fit(x, mask, y)  # the weights to use: fitted on every position
    print("WEIGHTS = (" + ", ".join(f"{v:.4f}" for v in w) + ")")
    for name, v in zip(FEATURES, w, strict=True):
        print(f"  {name:12} {v:+.4f}")


if __name__ == "__main__":
    main()
