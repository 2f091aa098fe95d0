"""What one seat has seen: the public events as it received them, folded into card knowledge.

- ``discard``: the cards in the discard pile since the last rebuild (it starts with the first
  card; plays and Discard Alls add to it; a reshuffle leaves only the top);
- ``known``: cards known to sit in another player's hand (roulette reveals, hands this seat gave
  away in a swap or a pass); they leave it when played, and move with swaps and passes;
- ``seen``: how many cards of each colour this seat has seen played or revealed this round;
- ``void``: colours (and ``"w"``: wilds) a player is believed not to hold: when a player draws on
  their turn without a stack to take, they had nothing to play, so nothing of the colour then
  asked and no wild (a bot plays when it can; a person may draw freely under some rules, so this
  is a belief, not a fact). It holds for the cards they had then; ``free`` counts the cards they
  got since (drawn, taken), which may be anything. Under ``draw: until_playable`` (the printed
  sheet) a draw goes on until a playable card turns up and that card must be played: of the
  cards drawn only the last may be of the colour or a wild, so only it is free (a fact here).
- ``older``: the voids a player's later draws replaced, each with its own count of free cards
  (the cards got since it was formed): a player who drew on red and then on blue holds no red
  among their oldest cards, and no blue among any but the newest. A Discard All is a void too
  (a fact): its player keeps no card of its colour.
- ``lacks``: cards a player is believed not to hold: one who takes a stack on their turn had
  nothing to answer it with (a bot answers when it can), so no card that stacks on its last
  draw card. Like ``void`` it holds for the cards they had then; ``lacks_free`` counts the cards
  they got since (the stack they took among them).
- ``shown``: per other player, their plays since they last got a card (oldest first), each
  with what the table showed then (:class:`engine.ai.model.Shown`: the playable cards, the
  stack, the hand counts), for the sampler to replay the ``normal`` choice on a sampled hand.
  ``counts`` (each player's cards) and ``direction`` follow the events between views for it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from ..cards import CARD_INFO, NAME_TO_LETTER, PLAYABLE, WILD, Kind
from ..plays import answers
from ..rules import Stacking
from .model import Shown

SHOWN_KEEP = 4  # the most recent plays kept per player
OLDER_KEEP = 4  # the replaced voids kept per player (there are four colours)


class Memory:
    def __init__(self, me: str, until_playable: bool = False,
                 stacking: Stacking | None = None, hand_size: int = 7) -> None:
        self.me = me
        self.hand_size = hand_size
        self.players: list[str] = []  # every seat, in seat order (from the views)
        self.counts: dict[str, int] = {}
        self.direction = 1
        self.shown: dict[str, list[Shown]] = {}
        self._drew_by: str | None = None  # the last event was this player's draw
        self.until_playable = until_playable  # the rules' draw: a draw ends on a playable card
        self.stacking = stacking  # the rules' stacking (None: no inference from taken stacks)
        self.lacks: dict[str, frozenset[str]] = {}
        self.lacks_free: dict[str, int] = {}
        self._stack_last = 0  # the draw value of the draw card the live stack ends with
        self.discard: list[str] = []
        self.known: dict[str, Counter[str]] = {}
        self.seen: Counter[str] = Counter()
        self.hand: list[str] = []  # this seat's hand as the events leave it
        self.active: list[str] = []  # seat order of players still in (for passes)
        self.void: dict[str, frozenset[str]] = {}
        self.free: dict[str, int] = {}
        self.older: dict[str, list[tuple[frozenset[str], int]]] = {}
        self.color: str | None = None  # the colour asked for now, as the events tell it
        self._forced = False  # the last event was a draw card: the next draw is no choice

    def sync(self, view: dict[str, Any]) -> None:
        """Align with a fresh view (the truth about this seat's own hand and the table)."""
        self.hand = list(view.get("hand", []))
        self.active = [p["id"] for p in view.get("players", []) if not p["eliminated"]]
        self.players = [p["id"] for p in view.get("players", [])]
        self.counts = {p["id"]: p["cards"] for p in view.get("players", []) if not p["eliminated"]}
        game = view.get("game")
        if game:
            self.direction = game["direction"]
        if game and (not self.discard or self.discard[-1] != game["top"]):
            self.discard = [*self.discard, game["top"]] if self.discard else [game["top"]]

    def _see(self, cards: list[str]) -> None:
        for c in cards:
            self.seen[CARD_INFO[c].color] += 1

    def observe(self, events: list[dict[str, Any]]) -> None:
        for e in events:
            getattr(self, "_on_" + e["kind"], _ignore)(e)
            if e["kind"] != "played":
                self._forced = False
            if e["kind"] != "drew":
                self._drew_by = None

    def _on_started(self, e: dict[str, Any]) -> None:
        self.discard = [e["top"]]
        self.known = {}
        self.seen = Counter()
        self._see([e["top"]])
        self.void, self.free, self.older = {}, {}, {}
        self.lacks, self.lacks_free = {}, {}
        self._stack_last = 0
        self.shown = {}
        self.active = list(self.players)
        self.counts = dict.fromkeys(self.players, self.hand_size)
        self.direction = 1
        color = CARD_INFO[e["top"]].color
        self.color = None if color == WILD else color

    def _on_played(self, e: dict[str, Any]) -> None:
        card = e["card"]
        self._record(e["player"], card)
        self._count(e["player"], -1)
        self.discard.append(card)
        self._see([card])
        self._forget(e["player"], card)
        info = CARD_INFO[card]
        self.color = None if info.wild else info.color
        self._forced = info.draw > 0
        self._stack_last = info.draw
        player = e["player"]
        if info.color in self.void.get(player, ()) and self.free.get(player, 0) > 0:
            self.free[player] -= 1  # it can only have come from the cards got since
        if player in self.older:
            self.older[player] = [(colors, free - 1 if info.color in colors and free > 0 else free)
                                  for colors, free in self.older[player]]
        if info.kind is Kind.DISCARD_ALL and player != self.me:
            # every other card of its colour goes with it (rules.md "Discard All")
            self._new_void(player, frozenset((info.color,)), 0)
        if card in self.lacks.get(player, ()) and self.lacks_free.get(player, 0) > 0:
            self.lacks_free[player] -= 1

    def _count(self, player: str, change: int) -> None:
        if player in self.counts:
            self.counts[player] += change

    def _record(self, player: str, card: str) -> None:
        """Before ``player``'s play of ``card`` changes anything: what the table showed then."""
        if player == self.me:
            return
        info = CARD_INFO[card]
        order = self.active
        if self._drew_by == player:  # a drawn card played at once: no choice (but its colour)
            self.shown[player] = [Shown(card, frozenset({card}), False, 0, 99, 0)]
            return
        if (info.kind is Kind.DISCARD_ALL or player not in order
                or len(order) < 2 or any(p not in self.counts for p in order)):
            self.shown.pop(player, None)  # more than one card left, or the table is unknown
            return
        stack = bool(self._stack_last) and self.stacking is not None
        if stack:
            playable = answers(self.stacking, self._stack_last)
        elif self.color is not None and self.discard:
            playable = PLAYABLE[self.color].get(self.discard[-1], frozenset())
        else:
            playable = frozenset()
        if card not in playable:  # the table is not what the events made of it: no inference
            self.shown.pop(player, None)
            return
        i = order.index(player)
        n = len(order)
        nxt = order[(i + self.direction) % n]
        prev = order[(i - self.direction) % n]
        danger = min(self.counts[p] for p in order if p != player)
        shown = Shown(card, playable, stack, self.counts[nxt], danger, self.counts[prev])
        self.shown[player] = [*self.shown.get(player, [])[-(SHOWN_KEEP - 1):], shown]

    def _on_reversed(self, e: dict[str, Any]) -> None:
        self.direction = e.get("direction", -self.direction)

    def _on_color(self, e: dict[str, Any]) -> None:
        self.color = NAME_TO_LETTER[e["color"]]
        shown = self.shown.get(e.get("player", ""))
        if shown and shown[-1].named is None and CARD_INFO[shown[-1].card].wild and (
                CARD_INFO[shown[-1].card].kind is not Kind.ROULETTE):
            shown[-1] = replace(shown[-1], named=e["color"])

    def _got(self, player: str, count: int) -> None:
        self._count(player, count)
        self.shown.pop(player, None)
        if player in self.void:
            self.free[player] = self.free.get(player, 0) + count
        if player in self.older:
            self.older[player] = [(colors, free + count) for colors, free in self.older[player]]
        if player in self.lacks:
            self.lacks_free[player] = self.lacks_free.get(player, 0) + count

    def _on_discarded(self, e: dict[str, Any]) -> None:
        cards = e["cards"]
        self._count(e["player"], -len(cards))
        self.shown.pop(e["player"], None)
        self.discard[-1:-1] = cards  # under the Discard All
        self._see(cards)
        for c in cards:
            self._forget(e["player"], c)

    def _forget(self, player: str, card: str) -> None:
        if player == self.me:
            if card in self.hand:
                self.hand.remove(card)
            return
        known = self.known.get(player)
        if known and known[card] > 0:
            known[card] -= 1

    def _gain(self, player: str, cards: list[str]) -> None:
        if player == self.me:
            self.hand.extend(cards)
        else:
            self.known.setdefault(player, Counter()).update(cards)

    def _on_drew(self, e: dict[str, Any]) -> None:
        player = e["player"]
        self._drew_by = player
        if player == self.me:
            self._count(player, e.get("count", 0))
            self.hand.extend(e.get("cards", []))
        elif self._forced or self.color is None:
            self._got(player, e.get("count", 0))
        else:
            count = e.get("count", 0)
            # every card drawn now is free of the voids formed before (they were unplayable now,
            # not then)
            self._new_void(player, frozenset((self.color, WILD)), count)
            self._count(player, count)
            self.shown.pop(player, None)
            self.free[player] = min(count, 1) if self.until_playable else count
            if player in self.lacks:
                self.lacks_free[player] = self.lacks_free.get(player, 0) + count

    def _new_void(self, player: str, void: frozenset[str], got: int) -> None:
        """``player`` holds none of ``void`` now; the void it replaces (and the older ones) still
        hold of the cards held before, ``got`` more cards free of each."""
        layers = [(c, f + got) for c, f in self.older.get(player, [])]
        if player in self.void:
            layers.append((self.void[player], self.free.get(player, 0) + got))
        # a colour the newer void also covers says nothing more (it covers more cards)
        layers = [(c - void, f) for c, f in layers if c - void]
        if layers:
            self.older[player] = layers[-OLDER_KEEP:]
        else:
            self.older.pop(player, None)
        self.void[player] = void
        self.free[player] = 0

    def _on_took_stack(self, e: dict[str, Any]) -> None:
        last, self._stack_last = self._stack_last, 0
        player = e["player"]
        if player == self.me:
            self._count(player, e.get("count", 0))
            self.hand.extend(e.get("cards", []))
            return
        self._got(player, e.get("count", 0))
        lacking = answers(self.stacking, last) if self.stacking is not None else None
        if lacking:  # nothing they held then answers the stack
            self.lacks[player] = lacking
            self.lacks_free[player] = e.get("count", 0)

    def _on_caught(self, e: dict[str, Any]) -> None:
        if e["player"] == self.me:
            self._count(e["player"], e.get("count", 0))
            self.hand.extend(e.get("cards", []))
        else:
            self._got(e["player"], e.get("count", 0))

    def _on_roulette(self, e: dict[str, Any]) -> None:
        self._see(e["cards"])
        self._count(e["player"], len(e["cards"]))
        self.shown.pop(e["player"], None)
        self._gain(e["player"], e["cards"])

    def _on_swapped(self, e: dict[str, Any]) -> None:
        a, b = e["a"], e["b"]
        for p in (a, b):
            self.shown.pop(p, None)
        if a in self.counts and b in self.counts:
            self.counts[a], self.counts[b] = self.counts[b], self.counts[a]
        self._move_beliefs({a: b, b: a})
        hands = {p: self._holding(p) for p in (a, b)}
        self._set_holding(a, hands[b])
        self._set_holding(b, hands[a])

    def _move_beliefs(self, moves: dict[str, str]) -> None:
        """Hands moved (``moves``: from whom to whom): what was believed of a hand goes with it,
        the players who kept theirs keep their beliefs. A hand this seat held is known card by
        card, so its new holder starts with no belief."""
        for beliefs in (self.void, self.free, self.older, self.lacks, self.lacks_free):
            moved = {to: beliefs[frm] for frm, to in moves.items() if frm in beliefs and frm != self.me}
            for frm in moves:
                beliefs.pop(frm, None)
            beliefs.update((to, v) for to, v in moved.items() if to != self.me)

    def _on_passed_hands(self, e: dict[str, Any]) -> None:
        order = list(self.active)
        if not order:
            self.void, self.free, self.older, self.lacks, self.lacks_free = {}, {}, {}, {}, {}
            return
        if e.get("direction", 1) < 0:
            order.reverse()
        self._move_beliefs({p: order[(k + 1) % len(order)] for k, p in enumerate(order)})
        holdings = [self._holding(p) for p in order]
        for k, p in enumerate(order):
            self._set_holding(p, holdings[k - 1])
        self.shown = {}
        if all(p in self.counts for p in order):
            sizes = [self.counts[p] for p in order]
            for k, p in enumerate(order):
                self.counts[p] = sizes[k - 1]

    def _holding(self, player: str) -> Counter[str]:
        return Counter(self.hand) if player == self.me else Counter(self.known.get(player, Counter()))

    def _set_holding(self, player: str, cards: Counter[str]) -> None:
        if player == self.me:
            self.hand = list(cards.elements())  # refined by the next view
        else:
            self.known[player] = Counter(cards)

    def _on_eliminated(self, e: dict[str, Any]) -> None:
        self.known.pop(e["player"], None)
        self.void.pop(e["player"], None)
        self.older.pop(e["player"], None)
        self.lacks.pop(e["player"], None)
        self.shown.pop(e["player"], None)
        self.counts.pop(e["player"], None)
        if e["player"] in self.active:
            self.active.remove(e["player"])

    def _on_reshuffled(self, e: dict[str, Any]) -> None:
        self.discard = self.discard[-1:]


def _ignore(e: dict[str, Any]) -> None:
    pass
