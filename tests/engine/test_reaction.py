"""Bots' reactions are human-like (engine.ai.reaction, docs/engine.md "Bots' reactions"): checked
statistically, with fixed seeds, against the documented distributions; and an easy bot forgets
UNO about as often as documented (engine.bots)."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from engine.ai.reaction import REACTIONS, catch_delay_ms
from engine.bots import EASY_FORGETS_UNO, easy_move

DRAWS = 4000


def _draws(level: str, window_ms: int, seed: int = 1) -> list[int | None]:
    rng = random.Random(seed)
    return [catch_delay_ms(level, window_ms, rng) for _ in range(DRAWS)]


def _expected_misses(level: str, window_ms: int) -> float:
    """Missed outright, or drawn past the window (the log-normal's tail)."""
    r = REACTIONS[level]
    z = math.log(window_ms / r.median_ms(window_ms)) / r.sigma
    past = 0.5 * math.erfc(z / math.sqrt(2))
    return r.misses + (1 - r.misses) * past


@pytest.mark.parametrize("window_ms", [2000, 5000, 10_000, 30_000])
@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_each_level_reacts_as_documented(level, window_ms):
    reaction = REACTIONS[level]
    draws = _draws(level, window_ms)
    caught = [d for d in draws if d is not None]
    misses = 1 - len(caught) / DRAWS
    # ~4000 draws: a miss rate's standard error is under 0.8 points
    assert abs(misses - _expected_misses(level, window_ms)) < 0.03, misses
    assert min(caught) >= reaction.floor_ms and max(caught) < window_ms
    # the median of what is caught: the log-normal's, cut at the window (and the floor)
    median = statistics.median(caught)
    r = reaction.median_ms(window_ms)
    tail = _expected_misses(level, window_ms) - reaction.misses
    expected = r * math.exp(reaction.sigma * _normal_quantile(0.5 * (1 - tail / (1 - reaction.misses))))
    assert abs(median - max(expected, reaction.floor_ms)) <= 0.06 * expected, (median, expected)


def _normal_quantile(p: float) -> float:
    return statistics.NormalDist().inv_cdf(p)


def test_harder_bots_react_sooner_and_miss_less():
    medians, misses = [], []
    for level in ("easy", "normal", "hard"):
        draws = _draws(level, 5000, seed=7)
        caught = [d for d in draws if d is not None]
        medians.append(statistics.median(caught))
        misses.append(1 - len(caught) / DRAWS)
    assert medians[0] > medians[1] > medians[2] >= 800  # hard is quick, not instant
    assert misses[0] > misses[1] > misses[2] > 0
    assert 2000 <= medians[0] <= 2500 and 1350 <= medians[1] <= 1650 and 900 <= medians[2] <= 1100


@pytest.mark.parametrize(("level", "least"), [("easy", 0.85), ("normal", 0.6), ("hard", 0.4)])
def test_a_human_who_clicks_in_under_a_second_wins_a_fair_share(level, least):
    """A human whose catch takes 0.6-1.0 s (uniform) against one bot of ``level``, default window."""
    rng = random.Random(3)
    bot = _draws(level, 5000, seed=11)
    wins = sum(1 for d in bot if d is None or d > rng.uniform(600, 1000))
    assert wins / DRAWS >= least, wins / DRAWS


def test_the_same_seed_draws_the_same_reaction():
    assert _draws("normal", 5000, seed=5)[:50] == _draws("normal", 5000, seed=5)[:50]


def test_an_easy_bot_forgets_uno_as_often_as_documented():
    view = {"hand": ["r-1", "r-2"], "players": [],
            "game": {"winner": None, "pending": None,
                     "legal": {"play": ["r-1"], "draw": False, "pass": False, "choose": [],
                               "cancel": False, "uno": False, "catch": []}}}
    rng = random.Random(2)
    plays = [easy_move(view, "a", rng) for _ in range(DRAWS)]
    forgot = sum(1 for a in plays if not a.uno) / DRAWS
    assert abs(forgot - EASY_FORGETS_UNO) < 0.03, forgot
