"""The ``normal`` bot's score of a card it may play: the higher, the sooner it plays it.

One function of the numbers the heuristic looks at, so the bot itself
(:mod:`engine.ai.normal`) and the ``hard`` bot's model of it (:mod:`engine.ai.model`) weigh a
card alike. The rollouts (:mod:`engine.ai.rollout`, ``guided_action``) keep an inlined copy:
they call it for every card of every simulated turn.
"""

from __future__ import annotations

from ..cards import CardInfo, Kind
from ..rules import Rules, Seven, Zero

HIGH_DRAW = frozenset({Kind.DRAW4, Kind.REVERSE4, Kind.DRAW6, Kind.DRAW10})


def card_score(info: CardInfo, same: int, mine: int, nxt: int, danger: int, incoming: int,
               rules: Rules) -> float:
    """``same``: the hand's cards of the card's colour (itself included); ``mine``: the hand's
    size; ``nxt``: the next active player's cards; ``danger``: the fewest cards any other active
    player holds; ``incoming``: the previous active player's cards (a 0 passes that hand in)."""
    limit = rules.mercy_limit
    score = same * 0.5  # keep the colour we are long in flowing
    if danger <= 2:
        score += info.points / 10  # dump points before someone goes out
    if info.draw:
        if nxt + info.draw >= limit:
            score += 12  # a knock-out is worth 250 points
        elif nxt <= 2:
            score += 8  # stop the next player from going out
        elif info.kind in HIGH_DRAW:
            score -= 6  # keep big draw cards to answer stacks
        else:
            score += 1
    kind = info.kind
    if kind is Kind.SKIP_ALL:
        score += 3 + (2 if mine > 3 else 0)
    elif kind is Kind.SKIP or kind is Kind.REVERSE:
        score += 2 + (3 if nxt <= 2 else 0)
    elif kind is Kind.DISCARD_ALL:
        score += 2 * (same - 1)
    elif kind is Kind.ROULETTE:
        score += 4 if nxt <= 3 or nxt + 6 >= limit else -2
    elif kind is Kind.NUMBER and info.number == 7 and rules.seven is not Seven.OFF:
        score += (mine - 1 - danger) * 1.5
    elif kind is Kind.NUMBER and info.number == 0 and rules.zero is Zero.PASS:
        score += (mine - 1 - incoming) * 1.0
    elif info.wild:
        score -= 4  # wilds are flexible: hold them
    else:
        score += info.points / 20
    return score
