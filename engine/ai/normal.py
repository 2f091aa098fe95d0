"""``normal``: a sound heuristic player.

It keeps its high draw cards to answer stacks, answers a stack with the smallest card that
does, dumps points when someone is close to going out, plays Skip Everyone and Discard All when
they pay, swaps a 7 with the smallest hand, passes a 0 when the hand coming in is smaller, aims
draw cards at players near the mercy limit, names the colour it has seen least when a roulette
is aimed at it, always calls UNO and always catches.
"""

from __future__ import annotations

import random
from typing import Any

from ..actions import Action, ActionKind
from ..cards import CARD_INFO, COLOR_LETTERS, LETTER_TO_NAME, Kind, most_held_color
from ..rules import DrawRule, Rules
from .heuristic import card_score
from .memory import Memory


class NormalBot:
    level = "normal"

    def __init__(self, me: str, rules: Rules) -> None:
        self.me = me
        self.rules = rules
        self.memory = Memory(me, rules.draw is DrawRule.UNTIL_PLAYABLE, rules.stacking,
                             rules.hand_size)

    def observe(self, events: list[dict[str, Any]]) -> None:
        self.memory.observe(events)

    # -- helpers ------------------------------------------------------------------------------

    def _players(self, view: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {p["id"]: p for p in view["players"]}

    def _next_active(self, view: dict[str, Any], step: int = 1) -> dict[str, Any]:
        players = view["players"]
        ids = [p["id"] for p in players]
        i = ids.index(self.me)
        d = view["game"]["direction"]
        n = len(players)
        found = 0
        for k in range(1, n + 1):
            p = players[(i + d * k) % n]
            if not p["eliminated"] and p["id"] != self.me:
                found += 1
                if found == step:
                    return p
        return players[i]

    def _previous_active(self, view: dict[str, Any]) -> dict[str, Any]:
        players = view["players"]
        ids = [p["id"] for p in players]
        i = ids.index(self.me)
        d = -view["game"]["direction"]
        n = len(players)
        for k in range(1, n + 1):
            p = players[(i + d * k) % n]
            if not p["eliminated"]:
                return p
        return players[i]

    def _choice(self, view: dict[str, Any]) -> Action:
        game = view["game"]
        pending = game["pending"]
        hand = view["hand"]
        legal = game["legal"]["choose"]
        choice = pending["choice"]
        if choice == "color":
            return Action(ActionKind.CHOOSE, color=most_held_color(hand))
        if choice == "roulette_color":
            # the colour seen least has the most cards left unseen: it turns up soonest
            seen = self.memory.seen
            best = min(COLOR_LETTERS, key=lambda c: (seen[c], COLOR_LETTERS.index(c)))
            return Action(ActionKind.CHOOSE, color=LETTER_TO_NAME[best])
        if choice == "target":
            players = self._players(view)
            target = min([t for t in legal if t != self.me] or legal,
                         key=lambda t: (players[t]["cards"], t))
            return Action(ActionKind.CHOOSE, target=target)
        # Discard All top: leave the Discard All itself (its colour is ours)
        return Action(ActionKind.CHOOSE, top=pending.get("card") or legal[0])

    # -- the decision -------------------------------------------------------------------------

    def decide(self, view: dict[str, Any], rng: random.Random) -> Action | None:
        game = view.get("game")
        if not game or game.get("winner") is not None or not game.get("legal"):
            return None
        self.memory.sync(view)
        legal = game["legal"]
        if legal["catch"]:
            return Action(ActionKind.CATCH, target=legal["catch"][0])
        if legal["uno"]:
            return Action(ActionKind.UNO)
        if legal["choose"]:
            return self._choice(view)
        plays = legal["play"]
        if game["stack"] is not None and game["stack"]["target"] == self.me:
            if plays:  # pass it on with the smallest card that does, keeping the big ones
                card = min(plays, key=lambda c: (CARD_INFO[c].draw, CARD_INFO[c].wild))
                return self._complete(view, card)
            return Action(ActionKind.DRAW)
        if plays:
            card = max(plays, key=lambda c: (self._score(view, c), rng.random()))
            return self._complete(view, card)
        if legal["draw"]:
            return Action(ActionKind.DRAW)
        if legal["pass"]:
            return Action(ActionKind.PASS)
        return None

    def _complete(self, view: dict[str, Any], card: str) -> Action:
        info = CARD_INFO[card]
        hand = view["hand"]
        color = target = None
        if info.wild and not (info.kind is Kind.ROULETTE and self.rules.roulette_chooser.value == "target"):
            color = most_held_color(hand)
        if info.kind is Kind.NUMBER and info.number == 7 and self.rules.seven.value != "off":
            others = [p for p in view["players"] if not p["eliminated"] and p["id"] != self.me]
            if others:
                target = min(others, key=lambda p: p["cards"])["id"]
        top = card if info.kind is Kind.DISCARD_ALL and self.rules.discard_all_top.value == "choose" else None
        uno = len(hand) == 2 or info.kind is Kind.DISCARD_ALL
        return Action(ActionKind.PLAY, card, color, target, top, uno)

    def _score(self, view: dict[str, Any], card: str) -> float:
        info = CARD_INFO[card]
        hand = view["hand"]
        others = [p for p in view["players"] if not p["eliminated"] and p["id"] != self.me]
        danger = min((p["cards"] for p in others), default=99)  # someone about to go out?
        same = sum(1 for c in hand if CARD_INFO[c].color == info.color)
        return card_score(info, same, len(hand), self._next_active(view)["cards"], danger,
                          self._previous_active(view)["cards"], self.rules)
