"""What a ``normal`` player's choice of card says about the hand it chose from.

The table the ``hard`` bot is measured against plays the ``normal`` heuristic
(:mod:`engine.ai.normal`): a card chosen freely is one with the best score among the playable
cards of the hand, and a stack is answered with the smallest card that answers it. So a hand
sampled for that player is only a likely one if the card they were seen to play is still their
choice from it. :class:`Shown` holds what the table showed when they played (public: the colour
and top card then, the stack, the hand counts), :func:`chose` replays the choice on a sampled
hand. The memory (:mod:`engine.ai.memory`) records a player's plays since they last got cards;
the sampler (:mod:`engine.ai.determinize`, ``model=True``) redeals a hand that contradicts one.
Against a person this is a belief, not a fact, as the voids are.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cards import CARD_INFO, most_held_color
from ..rules import Rules
from .heuristic import card_score


@dataclass(frozen=True, slots=True)
class Shown:
    card: str  # the card played
    playable: frozenset[str]  # every card that could have been played instead (by code)
    stack: bool  # it answered a stack (the smallest answer is the heuristic's)
    nxt: int  # the next active player's cards then
    danger: int  # the fewest cards any other active player held then
    incoming: int  # the previous active player's cards then (a 0 passes that hand in)
    named: str | None = None  # the colour a wild of theirs named: the one they held most of


def score(card: str, colors: dict[str, int], mine: int, shown: Shown, rules: Rules) -> float:
    """``normal``'s score of ``card`` (engine.ai.heuristic) from the numbers then."""
    info = CARD_INFO[card]
    return card_score(info, colors.get(info.color, 0), mine, shown.nxt, shown.danger, shown.incoming,
                      rules)


def chose(hand: list[str], shown: Shown, rules: Rules) -> bool:
    """Whether a ``normal`` player holding ``hand`` (the card played among it) could have
    played ``shown.card`` (ties count: the heuristic breaks them at random), naming the colour
    it named if it was a wild."""
    if shown.named is not None and most_held_color(hand) != shown.named:
        return False
    options = [c for c in dict.fromkeys(hand) if c in shown.playable and c != shown.card]
    if not options:
        return True
    card = shown.card
    if shown.stack:
        info = CARD_INFO[card]
        key = (info.draw, info.wild)
        return all((CARD_INFO[c].draw, CARD_INFO[c].wild) >= key for c in options)
    colors: dict[str, int] = {}
    for c in hand:
        k = CARD_INFO[c].color
        colors[k] = colors.get(k, 0) + 1
    mine = len(hand)
    mark = score(card, colors, mine, shown, rules) + 1e-9
    return all(score(c, colors, mine, shown, rules) <= mark for c in options)


def consistent(hand: list[str], shown: list[Shown], rules: Rules) -> bool:
    """Whether ``hand`` (held now) fits every play in ``shown`` (the player's plays since they
    last got a card, oldest first): before each, the hand held that card and the later ones."""
    then = list(hand)
    for s in reversed(shown):
        then.append(s.card)
        if not chose(then, s, rules):
            return False
    return True
