"""A fair deal anyone can check, after the fact (protocol.md "Fair deal"; app/history/verify.py):
``mercyless verify`` and ``GET /api/rounds/{id}/verify`` deal a stored round again from its seed
and say whether it is the round that was played; a record changed afterwards is refused, naming
what differs; bad input is exit 2."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import subprocess
import sys

import httpx
from sqlalchemy import select, update

from app.cli_verify import run
from app.history.db import make_engine, sessions, upgrade
from app.history.models import Round, RoundRecord
from app.history.writer import write_round
from engine import Action, Record, Step, apply, legal_actions, make_rules, new_game, next_deadline, view_for

from .harness import ROOT, ServerProcess
from .tables import level, ok, started
from .test_history import _history, bearer

RULES = {"deck": {"r-5": 12, "g-6": 12, "b-9": 12, "y-8": 12}, "hand_size": 2, "turn_timer_s": 0,
         "catch_window_s": 30}


def _played_round(seed: str = "fair-1") -> dict:
    """A whole round played by the engine (each turn's first legal action), as the commit
    leaves it in the outbox (app/rooms/play.py)."""
    players = ("p1", "p2", "p3")
    rules = make_rules({"turn_timer_s": 0, "hand_size": 5})
    state = new_game(players, rules, seed, dealer=1, scores=(10, 0, 30), now_ms=1000).state
    steps, now = [], 1000
    while view_for(state, None)["game"]["winner"] is None:
        now += 500
        due = next_deadline(state)
        if due is not None:
            now = max(now, due[1])
        player = players[state.turn]
        legal = [] if due is not None and due[1] <= now else legal_actions(state, player, now)
        player, action = (player, legal[0]) if legal else (None, Action(due[0]))
        state = apply(state, player, action, now).state
        steps.append(Step(player, action, now))
    record = Record(players, rules.to_dict(), seed, 1, (10, 0, 30), 1000, tuple(steps)).to_dict()
    seats = [{"seat": i, "player_id": p, "name": p.upper(), "bot_level": None,
              "final_cards": len(state.hands[i]), "eliminated": state.eliminated[i],
              "score_after": state.scores[i]} for i, p in enumerate(players)]
    return {"uid": f"ROOMAA:1:{seed}", "match": 1, "round": 1, "record": record, "ended_ms": now,
            "match_over": False, "winner": players[state.winner], "reason": state.end_reason,
            "points": state.points, "seats": seats}


async def _stored(tmp_path, entry: dict) -> tuple[str, str]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'history'}.sqlite3"
    await upgrade(url)
    engine = make_engine(url)
    made = sessions(engine)
    row_id = await write_round(made, "ROOMAA", entry)
    async with made() as session:
        public_id = await session.scalar(select(Round.public_id).where(Round.id == row_id))
    await engine.dispose()
    return url, public_id


def _verify(round_id=None, file=None, url=None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(round_id, file, url, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


async def test_a_stored_round_checks_out_and_a_changed_seed_is_refused(tmp_path):
    entry = _played_round()
    url, public_id = await _stored(tmp_path, entry)
    code, out, _ = await _in_thread(_verify, public_id, None, url)
    assert code == 0, out
    assert "FAIR DEAL" in out and "seed fair-1" in out
    assert hashlib.sha256(b"fair-1").hexdigest() in out

    # the seed changed afterwards, in the round and its record alike: the recorded plays do
    # not follow from what the new seed deals
    engine = make_engine(url)
    async with sessions(engine)() as session:
        row = await session.scalar(select(Round).where(Round.public_id == public_id))
        forged = json.loads((await session.get(RoundRecord, row.id)).record)
        forged["seed"] = "fair-2"
        await session.execute(update(RoundRecord).where(RoundRecord.round_id == row.id)
                              .values(record=json.dumps(forged)))
        await session.execute(update(Round).where(Round.id == row.id).values(seed="fair-2"))
        await session.commit()
    await engine.dispose()
    code, out, _ = await _in_thread(_verify, public_id, None, url)
    assert code == 1, out
    assert "MISMATCH" in out and "does not follow from the seed's deal" in out

    # no such round, and a database that is not there: bad input, not a verdict
    code, out, err = await _in_thread(_verify, "A" * 22, None, url)
    assert code == 2 and "no round" in err and out == ""


async def _in_thread(fn, *args):
    import asyncio

    return await asyncio.to_thread(fn, *args)  # run() runs its own event loop


def test_a_record_file_checks_out_and_a_swapped_hand_or_changed_seed_is_named(tmp_path):
    from app.history.verify import verify

    entry = _played_round("fair-3")
    record = Record.from_dict(entry["record"])
    summary = {"winner": entry["winner"], "seats": [
        {"id": s["player_id"], "name": s["name"], "final_cards": s["final_cards"], "score": s["score_after"]}
        for s in entry["seats"]]}
    verdict = verify(record, outcome=summary)
    assert verdict.ok and verdict.top == new_game(record.players, make_rules(record.rules), "fair-3",
                                                  dealer=1).state.discard[-1]
    document = {"round": summary, "record": entry["record"],
                "deal": {"deal_commitment": verdict.commitment, "top": verdict.top, "hands": verdict.hands}}
    path = tmp_path / "round.json"
    path.write_text(json.dumps(document))
    assert _verify(file=str(path))[0] == 0

    swapped = copy.deepcopy(document)
    hands = swapped["deal"]["hands"]
    hands["p1"], hands["p2"] = hands["p2"], hands["p1"]
    path.write_text(json.dumps(swapped))
    code, out, _ = _verify(file=str(path))
    assert code == 1
    assert "P1 (p1)'s starting hand differs: record " + " ".join(verdict.hands["p2"]) in out
    assert "P2 (p2)'s starting hand differs" in out

    reseeded = copy.deepcopy(document)
    reseeded["record"]["seed"] = "fair-4"
    path.write_text(json.dumps(reseeded))
    code, out, _ = _verify(file=str(path))
    other = verify(Record.from_dict(reseeded["record"]))
    assert code == 1
    assert "the seed does not hash to the commitment shown at the deal" in out
    if other.top != verdict.top:
        assert f"the first top card differs: record {verdict.top}, seed deals {other.top}" in out

    for bad in ("not json", json.dumps([1, 2]), json.dumps({"record": {"version": 1}})):
        path.write_text(bad)
        code, out, err = _verify(file=str(path))
        assert code == 2 and out == "" and "mercyless verify:" in err, (bad, err)
    assert _verify(file=str(tmp_path / "missing.json"))[0] == 2


def test_the_command_line_answers_a_bad_id_with_exit_2(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'none'}.sqlite3",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "app", "verify", "no-such-round"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "mercyless verify:" in done.stderr and "Traceback" not in done.stderr


async def test_a_round_played_on_the_server_keeps_its_seed_and_checks_out(tmp_path):
    """Played to the end through a server with a database: the round keeps its seed, the
    endpoint deals it again (the seed shown at round over, its commitment shown at the start),
    and the document it answers checks out offline."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'played'}.sqlite3"
    server = ServerProcess(redis="fake", database_url=url).start()
    try:
        ann, bob = await started(server, ["Ann", "Bob"], RULES)
        commitment = ann.view["game"]["deal_commitment"]
        hand, top = sorted(ann.view["hand"]), ann.view["game"]["top"]
        while ann.view["game"]["winner"] is None:
            mover = ann if ann.my_turn() else bob
            legal = mover.game["legal"]
            move = ({"type": "play", "card": legal["play"][0], "uno": len(mover.view["hand"]) == 2}
                    if legal["play"] else {"type": "draw"} if legal["draw"] else {"type": "pass"})
            await ok(mover, move)
            await level([ann, bob])
        seed = ann.view["game"]["deal_seed"]
        body = await _history(server, ann.view["room"]["code"], ann.token, 1)
        (played,) = [r for m in body["matches"] for r in m["rounds"]]
        async with httpx.AsyncClient(base_url=server.url, headers=bearer(ann.token)) as http:
            got = (await http.get(f"/api/rounds/{played['id']}/verify")).json()
            assert (await http.get("/api/rounds/" + "B" * 22 + "/verify")).status_code == 404
            stranger = await http.get(f"/api/rounds/{played['id']}/verify", headers=bearer("x" * 22))
            assert stranger.status_code == 404
        assert got["ok"] is True and got["problems"] == []
        assert got["seed"] == seed == got["record"]["seed"]
        assert got["deal_commitment"] == commitment
        assert got["top"] == top and got["hands"][ann.you] == hand
        path = tmp_path / "round.json"
        path.write_text(json.dumps(got))
        assert _verify(file=str(path))[0] == 0
        for c in (ann, bob):
            await c.close()
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]
