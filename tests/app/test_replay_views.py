"""A finished round's replay (``app/history/reads.py``) shows each step as a live spectator saw
it, and never a card they did not see then.

The round is played in process through the server's own steps (``app.rooms.play.game_action``
records each step as the server does, ``app.rooms.model.room_views`` is the choke point every
patch is cut from), written to the history and read back through the replay route's function.
A play that lacks its colour, target or Discard All top pauses with the card still in the
player's hand (rules.md "Choices"): only its player sees which card waits, and a ``cancel`` takes
it back unseen. The replay once printed that card in the step's ``action``.
"""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import orjson
from sqlalchemy import select

from app.api.history import _replay
from app.history.db import make_engine, sessions, upgrade
from app.history.models import Round
from app.history.reads import load_round
from app.history.writer import write_round
from app.rooms import lobby
from app.rooms.model import Loaded, room_views
from app.rooms.play import game_action
from engine import CARD_INFO, Action, easy_move, next_deadline, view_for
from engine.actions import CANCEL, choose, play

# A red-heavy deck in which seat 0's first hand (seed below) holds a wild, a red 7 and a red
# Discard All with other reds, on a red top: each kind of pause can be played on the first turn.
SEED = "replay-2"
DECK = {"r-7": 3, "r-discard": 3, "w-wild": 4, "w-draw6": 2, "r-3": 4, "r-5": 4,
        "y-2": 2, "g-2": 2, "b-2": 2}
RULES = {"deck": DECK, "discard_all_top": "choose", "turn_timer_s": 0}


def _cards(value: Any) -> set[str]:
    """Every card code anywhere in a JSON value."""
    if isinstance(value, str):
        return {value} if value in CARD_INFO else set()
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return set().union(*map(_cards, value)) if value else set()
    return set()


def _counts(players: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a players entry says of the round (the room adds names, levels and colours)."""
    return [(p["id"], p["cards"], p["eliminated"], p["uno"], p["score"]) for p in players]


class Watched:
    """A room in process with a spectator, whose live view and events are kept after each step
    as the fan-out would send them."""

    def __init__(self, monkeypatch) -> None:
        # the round's seed is the deal's only chance: this one makes the deal the test needs
        monkeypatch.setattr(lobby, "secrets", SimpleNamespace(token_hex=lambda _n: SEED))
        room, self.ann, _ = lobby.new_room("RPLAYS", "Ann", RULES, 0)
        self.loaded = Loaded(room)
        self.bob = lobby.join(self.loaded, "Bob")[0]
        lobby.start(self.loaded, self.ann, 0)
        self.eve, _, spectator, _ = lobby.join(self.loaded, "Eve")
        assert spectator
        self.live: list[dict[str, Any]] = [{"events": [], "view": self._view(0)}]

    def _view(self, now: int) -> dict[str, Any]:
        return room_views(self.loaded, [self.eve], now)[1][self.eve]

    def act(self, player: str | None, action: Action, now: int) -> None:
        events = game_action(self.loaded, player, action, now)
        self.live.append({"events": [e.to_wire(self.eve) for e in events], "view": self._view(now)})

    def finish(self, rng: random.Random, now: int) -> None:
        """Play the round out: easy bots in every seat, catch windows closed when due (as the
        room's timer applies them)."""
        for _ in range(3000):
            s = self.loaded.game
            if s.winner is not None:
                return
            now += 700
            due = next_deadline(s)
            if due is not None and due[1] <= now:
                self.act(None, Action(due[0]), now)
                continue
            actor = s.players[s.pending.player if s.pending is not None else s.turn]
            move = easy_move(view_for(s, actor, now_ms=now), actor, rng)
            assert move is not None
            self.act(actor, move, now)
        raise AssertionError("the round did not end")


async def _stored_replay(loaded: Loaded, tmp_path) -> list[dict[str, Any]]:
    """The round written to the history as the writer writes it, and its replay as served."""
    entry = dict(loaded.room.finished_rounds[-1])
    entry["record"] = {**entry["record"], "steps": loaded.steps}  # Redis holds them beside the room
    url = f"sqlite+aiosqlite:///{tmp_path / 'replay.sqlite3'}"
    await upgrade(url)
    engine = make_engine(url)
    try:
        made = sessions(engine)
        round_id = await write_round(made, loaded.room.code, orjson.loads(orjson.dumps(entry)))
        async with made() as session:
            public_id = await session.scalar(select(Round.public_id).where(Round.id == round_id))
        row = await load_round(made, public_id)
    finally:
        await engine.dispose()
    return _replay(row, with_room=True)["steps"]


async def test_a_replay_shows_each_step_as_the_spectator_saw_it_and_no_card_they_did_not(
        monkeypatch, tmp_path):
    w = Watched(monkeypatch)
    ann = w.ann
    paused = []
    # each kind of pause on the first turn: a colour and a target taken back, a top chosen
    for action, then in ((play("w-wild"), CANCEL), (play("r-7"), CANCEL),
                         (play("r-discard"), choose(top="r-5"))):
        w.act(ann, action, len(w.live) * 100)
        assert w.live[-1]["view"]["game"]["pending"]["player"] == ann
        paused.append(len(w.live) - 1)
        w.act(ann, then, len(w.live) * 100)
    w.finish(random.Random(7), len(w.live) * 100)
    assert w.loaded.game.winner is not None

    steps = await _stored_replay(w.loaded, tmp_path)

    assert len(steps) == len(w.live)
    for seen, shown in zip(w.live, steps, strict=True):
        at = shown["step"]
        assert shown["table"]["game"] == seen["view"]["game"], at
        assert _counts(shown["table"]["players"]) == _counts(seen["view"]["players"]), at
        if at:  # (the spectator came in after the deal)
            assert shown["events"] == seen["events"], at
        # the step's action names no card the step's own public events did not
        assert _cards(shown["action"]) <= _cards(seen["events"]), (at, shown["action"])
        assert _cards(shown) <= _cards(seen), at
    # a play that paused reads as a play and nothing more, whatever became of its card
    assert [steps[i]["action"] for i in paused] == [{"type": "play"}] * 3
    # the easy bots' plays pause too (they send no choice with a card): they were checked above
    assert sum(1 for s in steps[7:] if s["action"] == {"type": "play"}) > 0
