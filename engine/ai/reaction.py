"""How quickly a bot reacts to an exposed player (rules.md "UNO and Catch"), by level.

A human needs a moment to see that someone forgot UNO and to click: reaction times are skewed,
most near a typical time and a few much later, so each level's delay is drawn from a
log-normal distribution, and sometimes the bot does not notice at all. The typical time (the
median) is a share of the room's catch window, held between bounds (a 2 s window still leaves a
human a chance; a 30 s one does not make bots sleepy), and never below a floor: no one clicks
in 200 ms. A draw past the window is a miss too. Draws come from the ``rng`` given: the server
seeds it from the game and the exposure, so a replay catches at the same moments.

======  ===========  =================  =====  =====  ==========  ====================
level   median       median bounds      sigma  floor  misses      at the 5 s default
======  ===========  =================  =====  =====  ==========  ====================
easy    45% window   1.0 s .. 3.0 s     0.5    0.7 s  30%         median 2.25 s
normal  30% window   0.8 s .. 2.0 s     0.4    0.5 s  10%         median 1.5 s
hard    20% window   0.6 s .. 1.2 s     0.3    0.4 s  3%          median 1.0 s
======  ===========  =================  =====  =====  ==========  ====================
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Reaction:
    share: float  # the median, as a share of the catch window...
    low_ms: int  # ...held between these
    high_ms: int
    sigma: float  # the log-normal's spread (of the log of the delay)
    floor_ms: int  # no draw is quicker
    misses: float  # the chance the bot never notices

    def median_ms(self, window_ms: int) -> float:
        return min(max(self.share * window_ms, self.low_ms), self.high_ms)


REACTIONS: dict[str, Reaction] = {
    "easy": Reaction(0.45, 1000, 3000, 0.5, 700, 0.30),
    "normal": Reaction(0.30, 800, 2000, 0.4, 500, 0.10),
    "hard": Reaction(0.20, 600, 1200, 0.3, 400, 0.03),
}


def catch_delay_ms(level: str, window_ms: int, rng: random.Random) -> int | None:
    """How long after the exposure a bot of ``level`` catches, or ``None`` when it does not
    (it missed it, or would be too late for a window of ``window_ms``)."""
    reaction = REACTIONS.get(level, REACTIONS["easy"])
    if rng.random() < reaction.misses:
        return None
    delay = rng.lognormvariate(math.log(reaction.median_ms(window_ms)), reaction.sigma)
    delay_ms = max(reaction.floor_ms, round(delay))
    return delay_ms if delay_ms < window_ms else None
