"""A server process that dies mid-game (real Redis), and an audit of hidden information over
many random games.

Restart: the room lives in Redis, so a new process (same key prefix; the same port or new
ones) takes over: clients come back with their tokens to the last committed version, and the
timers that fell due while no process ran fire once.

Audit: every message each client receives is kept; no message to a player may carry another
player's cards (outside the public events and the round-over reveal), a token, or the seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import random
import re
import signal
from types import SimpleNamespace
from typing import Any

import jsonpatch
import pytest
import redis

from .harness import Client, ServerProcess, real_client, real_redis_available
from .scripted import stored_room_and_steps, stored_steps
from .test_timers import actor, drive, open_room, patches, settle

# -- restart ----------------------------------------------------------------------------------

RESTART_RULES = {"turn_timer_s": 0, "seven": "off", "zero": "off", "mercy_limit": 60,
                 "draw": "until_playable"}


def real_redis() -> redis.Redis:
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    return real_client()


def stored(r: redis.Redis, prefix: str, code: str) -> tuple[int, dict[str, Any]]:
    version, document = r.hmget(f"{prefix}:{{{code}}}:room", ["v", "d"])
    return int(version), json.loads(document)


def successor(old: ServerProcess, *, same_port: bool, **settings: Any) -> ServerProcess:
    """A new process on the same Redis key prefix (and the same port, or a new one)."""
    new = ServerProcess(redis="real", prefix=old.prefix, **settings)
    if same_port:
        new.port = old.port
        new.url, new.ws_url = old.url, old.ws_url
    return new.start()


def forget(r: redis.Redis, prefix: str) -> None:
    for key in r.scan_iter(f"{prefix}:*"):
        r.delete(key)


async def come_back(clients: list[Client], server: ServerProcess) -> None:
    """The old process is gone: each client sees its socket end and says hello to ``server``."""
    for c in clients:
        await asyncio.wait_for(c.ws.wait_closed(), 10)
        c.server = server
    await asyncio.gather(*(c.connect() for c in clients))


def quiet(view: dict[str, Any], humans: set[str]) -> bool:
    """A human's turn with nothing timed in the air (no choice, no catch window)."""
    g = view["game"]
    return actor(view) in humans and not g["pending"] and not g["exposed"]


# node_ttl_ms: the killed process is not given up (and its players swept off, a commit) while the
# clients come back, however slowly a loaded machine starts the process that takes over
# and away_turn_grace_ms 0: a disconnected player's turn waits for them (no bot stands in) while
# they come back
SETTINGS = {"clock_speed": 10, "bot_delay_ms": 3000, "reconnect_grace_ms": 600_000, "node_ttl_ms": 600_000,
            "away_turn_grace_ms": 0}


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
async def test_a_restarted_server_resumes_the_room_at_its_last_version(sig):
    r = real_redis()
    first = ServerProcess(redis="real", **SETTINGS).start()
    later: list[ServerProcess] = []
    try:
        clients = await open_room(first, ("Ann", "Bob", "Cat"), RESTART_RULES, bots=1)
        ann = clients[0]
        humans = {c.you for c in clients}
        await drive(clients, lambda: len(ann.events) >= 12 and quiet(ann.view, humans))
        await settle(clients)
        before = {c.you: (c.version, c.view) for c in clients}
        version, _ = stored(r, first.prefix, ann.code)
        assert {v for v, _ in before.values()} == {version}
        err = first.stop(sig)
        if sig == signal.SIGTERM:
            assert "Traceback" not in err, err[-3000:]
        after_stop, _ = stored(r, first.prefix, ann.code)
        if sig == signal.SIGKILL:
            # one process, on the port the clients know, takes over
            assert after_stop == version
            later.append(successor(first, same_port=True, **SETTINGS))
            await come_back(clients, later[0])
            await settle(clients)
            # each hello records the process that now holds the socket: a commit, unseen in views
            assert stored(r, first.prefix, ann.code)[0] == version + len(humans)
            for c in clients:
                assert c.version == version + len(humans) and c.view == before[c.you][1]
        else:
            # a graceful stop records the drops; two new processes share the room
            assert after_stop == version + len(humans)
            later += [successor(first, same_port=False, **SETTINGS) for _ in range(2)]
            await come_back(clients[:1], later[0])
            await come_back(clients[1:], later[1])  # two hellos at once on one process
            await settle(clients)
            assert stored(r, first.prefix, ann.code)[0] == after_stop + len(humans)
            for c in clients:
                assert c.view == before[c.you][1]  # everyone back: the very same view
        for c in clients:
            assert c.view["hand"] == before[c.you][1]["hand"]
        # the room goes on: humans move, the bot moves (on whichever process fires it)
        start = len(ann.events)
        bots = {p["id"] for p in ann.view["players"] if p["bot"]}

        def bot_moved_twice() -> bool:
            return len([e for e in ann.events[start:] if e.get("player") in bots
                        and e["kind"] in ("played", "drew", "took_stack", "passed")]) >= 2

        await drive(clients, bot_moved_twice, timeout=40)
        await settle(clients)
        version, _ = stored(r, first.prefix, ann.code)
        for c in clients:
            assert c.version == version and c.gaps == 0
            await c.close()
    finally:
        for proc in later:
            err = proc.stop()
            assert "Traceback" not in err, err[-3000:]
        first.stop(signal.SIGKILL)
        forget(r, first.prefix)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
async def test_timers_due_while_no_process_ran_fire_once_after_the_restart(sig):
    """Bob went down to one card without UNO and the bot's turn came; the process stops before
    either the catch window or the bot's think time ends. The next process fires both, once."""
    r = real_redis()
    # a slower clock than the other restarts' (1 s of real time for the bot's think time and the
    # catch window, not 0.3 s): the process must stop before either fires, and a loaded CI
    # machine once took longer than 0.3 s between the arming commit and the stop
    settings = {**SETTINGS, "bot_catch_delay_ms": 10_000_000, "clock_speed": 3}
    # number cards only: no skips or stacks, so Bob's second card exposes him before the bot
    rules = {**RESTART_RULES, "hand_size": 2, "catch_window_s": 3,
             "deck": {"r-1": 20, "r-2": 20, "y-1": 20, "y-2": 20, "g-1": 1, "b-1": 1}}
    first = ServerProcess(redis="real", **settings).start()
    later: ServerProcess | None = None
    try:
        clients = await open_room(first, ("Ann", "Bob"), rules, bots=1)
        ann, bob = clients
        bot = next(p["id"] for p in ann.view["players"] if p["bot"])

        def armed() -> bool:
            g = ann.view["game"]
            return (ann.view["room"]["status"] == "playing" and actor(ann.view) == bot
                    and [x["player"] for x in g["exposed"]] == [bob.you])

        await drive(clients, armed, exposers=(bob.you,))
        # the room and its steps as they were before the stop (one read): a graceful stop on a
        # loaded machine may take longer than the think time or the catch window, and the
        # stopping process may make the move or close the window itself (once, all the same)
        version, document, before = stored_room_and_steps(r, first.prefix, ann.code)
        assert version == ann.version  # stopped before either timer fired
        steps = len(before)
        first.stop(sig)
        until = ann.view["game"]["exposed"][0]["until"]
        bot_due = document["bot_due"]
        assert bot_due is not None
        later = successor(first, same_port=sig == signal.SIGKILL, **settings)
        await come_back(clients, later)
        await ann.until_view(lambda v: not v["game"]["exposed"] and actor(v) != bot)
        await settle(clients)
        version, document = stored(r, first.prefix, ann.code)
        fired = stored_steps(r, first.prefix, ann.code)[steps:]
        # Bob's window closed once and the bot's due move was made once, each at or after its
        # time, in the order their times fell (under load either may come first). The bot may
        # have had to draw first: each of its steps then took a think time of its own. At most
        # a window of the bot's own closed after (it forgets UNO now and then); nobody else moved
        moves = [s for s in fired if s[0] == bot]
        expiries = [s for s in fired if s[:2] == [None, {"type": "expire"}]]
        assert moves and moves[0][2] >= bot_due and moves[-1][1]["type"] == "play", fired
        assert all(b[2] - a[2] >= 3000 for a, b in itertools.pairwise(moves)), fired
        assert 1 <= len(expiries) <= 2 and expiries[0][2] >= until, fired
        assert len(moves) + len(expiries) == len(fired), fired
        assert all(s[2] >= moves[-1][2] + 3000 for s in expiries[1:]), fired
        # the catch comes too late now, and the game goes on
        answer = await ann.send({"type": "catch", "target": bob.you})
        # (the bot's move may have been its last card: then the round is over)
        assert answer["type"] == "error" and answer["code"] in ("not_exposed", "game_over"), answer
        assert len(bob.view["hand"]) == 1 or bob.view["room"]["status"] != "playing"
        for c in clients:
            assert c.version == version and c.gaps == 0
            await c.close()
    finally:
        if later is not None:
            err = later.stop()
            assert "Traceback" not in err, err[-3000:]
        first.stop(signal.SIGKILL)
        forget(r, first.prefix)


# -- hidden information audit -----------------------------------------------------------------

CARD = re.compile(r"\b[rygbw]-(?:\d|draw2|draw4|skip|skipall|reverse|discard|reverse4|draw6|draw10"
                  r"|roulette|wild)\b")
HEX32 = re.compile(r"[0-9a-f]{32}")
PLAYER_KEYS = {"id", "name", "bot", "connected", "cards", "eliminated", "uno", "score", "level", "hue",
               "away"}
GAME_KEYS = {"top", "color", "direction", "turn", "turn_deadline", "stack", "pending", "draw_pile",
             "discard_pile", "set_aside", "exposed", "dealer", "winner", "deal_commitment"}
OVER_KEYS = {"revealed", "points", "reason", "deal_seed"}
FAIR_DEAL_KEYS = ("deal_commitment", "deal_seed")
OWN_KEYS = {"legal", "drawn"}
SECRET_KINDS = ("drew", "took_stack", "caught")
# what a message sent against a view that moved on in the meantime may be refused with
RACE_CODES = {"not_your_turn", "choice_pending", "illegal_card", "not_in_hand", "stack_pending",
              "no_choice_pending", "not_exposed", "not_one_card", "already_called", "draw_not_allowed",
              "pass_not_allowed", "must_play_drawn", "game_over", "bad_target", "cancel_not_allowed",
              "eliminated", "bad_color", "bad_top", "spectator"}
AUDIT_ROOMS = 10


def random_rules(rng: random.Random) -> dict[str, Any]:
    return {
        "draw": rng.choice(["voluntary", "until_playable", "until_playable", "one"]),
        "stacking": rng.choice(["ladder", "wild_any", "any", "off"]),
        "first_card": rng.choice(["redraw", "apply"]),
        "discard_all_top": rng.choice(["discard_all", "choose"]),
        "seven": rng.choice(["swap", "may_swap", "off"]),
        "zero": rng.choice(["pass", "off"]),
        "roulette_chooser": rng.choice(["target", "player"]),
        "hand_size": rng.randint(3, 6),
        "mercy_limit": rng.choice([15, 25]),
        "catch_window_s": rng.choice([1, 5]),
        "uno_penalty": rng.choice([2, 4]),
        "turn_timer_s": rng.choice([0, 10]),
        "target_score": 100,
    }


def random_move(c: Client, rng: random.Random) -> dict[str, Any] | None:
    """A move from what the view says is legal (sometimes leaving a choice for later)."""
    g, hand, rules = c.game, c.view["hand"], c.view["room"]["rules"]
    legal = g.get("legal") if g else None
    if not legal or c.view["room"]["status"] != "playing":
        return None
    if legal["catch"] and rng.random() < 0.5:
        return {"type": "catch", "target": rng.choice(legal["catch"])}
    if legal["uno"] and rng.random() < 0.7:
        return {"type": "uno"}
    if actor(c.view) != c.you:
        return None
    pending = g["pending"]
    if pending and pending["player"] == c.you:
        if legal["cancel"] and rng.random() < 0.1:
            return {"type": "cancel"}
        field = pending["choice"] if pending["choice"] in ("target", "top") else "color"
        return {"type": "choose", field: rng.choice(legal["choose"])}
    options: list[dict[str, Any]] = [{"type": "play", "card": x} for x in legal["play"]]
    if legal["draw"]:
        options.append({"type": "draw"})
    if legal["pass"]:
        options.append({"type": "pass"})
    move = rng.choice(options)
    if move["type"] == "play" and rng.random() < 0.6:  # the choices in the play itself
        card = move["card"]
        if card.startswith("w-") and not (card == "w-roulette" and rules["roulette_chooser"] == "target"):
            move["color"] = rng.choice(["red", "yellow", "green", "blue"])
        if card.endswith("-7") and rules["seven"] != "off":
            others = [p["id"] for p in c.view["players"] if not p["eliminated"]
                      and (p["id"] != c.you or rules["seven"] == "may_swap")]
            move["target"] = rng.choice(others)
        if card.endswith("-discard") and rules["discard_all_top"] == "choose":
            move["top"] = card
    if move["type"] == "play" and len(hand) == 2 and rng.random() < 0.7:
        move["uno"] = True
    return move


async def play_client(c: Client, rng: random.Random, lazy: bool, drops: bool) -> None:
    """Random legal moves until the round ends; a ``lazy`` player leaves their turns to the
    turn timer, a player who ``drops`` leaves and says hello again now and then."""
    while c.view["room"]["status"] == "playing":
        if drops and rng.random() < 0.03:
            await c.close()
            await c.connect()
            continue
        move = None if lazy and rng.random() < 0.8 else random_move(c, rng)
        if move is None:
            with contextlib.suppress(TimeoutError):
                await c.recv(0.5)
            continue
        seen = c.version
        answer = await c.send(move)
        if answer["type"] == "error":
            # refused only when the view it was chosen from was out of date, or for a catch
            # that came after the window's time ran out (judged by time, before the server's
            # tick closes the window with a new version)
            late_catch = move["type"] == "catch" and answer["code"] == "not_exposed"
            assert late_catch or (c.version != seen and answer["code"] in RACE_CODES), (move, answer)


async def audit_room(server: ServerProcess, rng: random.Random,
                     r: redis.Redis | None) -> tuple[list[Client], list[str]]:
    """A room of random players for two rounds; returns its clients and the secrets that must
    never reach one: every token, and (with the real Redis, read from the room's document at the
    end of each round) every seed."""
    rules = random_rules(rng)
    humans = rng.choice([3, 4])
    host = server.create("P0", rules)
    code = host["code"]
    tokens = [host["token"]]
    clients = [await Client(server, code, host["token"]).connect()]
    for i in range(1, humans):
        joined = server.join(code, f"P{i}")
        tokens.append(joined["token"])
        clients.append(await Client(server, code, joined["token"]).connect())
    for _ in range(rng.choice([0, 1, 2])):
        assert (await clients[0].send({"type": "add_bot", "level": "easy"}))["type"] == "ack"
    assert (await clients[0].send({"type": "start"}))["type"] == "ack"
    if rng.random() < 0.5:  # a spectator: no hand now, a seat from the rematch on
        joined = server.join(code, "Spec")
        assert joined["spectator"]
        tokens.append(joined["token"])
        clients.append(await Client(server, code, joined["token"]).connect())
    lazy = rng.randrange(len(clients)) if rules["turn_timer_s"] else -1
    drops = rng.randrange(len(clients))
    for round_no in range(2):
        await settle(clients)
        await asyncio.gather(*(play_client(c, random.Random(rng.random()), i == lazy, i == drops)
                               for i, c in enumerate(clients)))
        await settle(clients)
        if r is not None:
            _, document = stored(r, server.prefix, code)
            assert document["game"]["seed"] == document["record"]["seed"]
            tokens.append(document["record"]["seed"])
        if round_no == 0:
            assert (await clients[0].send({"type": "rematch"}))["type"] == "ack"
    return clients, tokens


def strings(value: Any, skip_rules: bool = True) -> list[str]:
    """Every string value inside ``value`` (the rules, which name every card code, left out)."""
    out: list[str] = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            out += strings(v)
    elif isinstance(value, dict):
        if value.get("kind") == "rules_changed":
            return out
        for k, v in value.items():
            if not (skip_rules and k == "rules"):
                out += strings(v)
    return out


def cards_in(value: Any) -> set[str]:
    return {m for s in strings(value) for m in CARD.findall(s)}


def public_cards(events: list[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for e in events:
        if e["kind"] == "played":
            out.add(e["card"])
        elif e["kind"] in ("discarded", "roulette"):
            out.update(e["cards"])
        elif e["kind"] == "started":
            out.add(e["top"])
    return out


def without_fair_deal(value: Any) -> Any:
    """``value`` without the fair deal's fields (protocol.md "Fair deal"): the commitment is a
    hash, and where the seed may stand (the round over) is checked on its own (``check_view``,
    ``audit``); anywhere else a seed is a leak."""
    if isinstance(value, dict):
        if str(value.get("path", "")).rsplit("/", 1)[-1] in FAIR_DEAL_KEYS:
            return None  # a patch operation on the field itself
        return {k: without_fair_deal(v) for k, v in value.items() if k not in FAIR_DEAL_KEYS}
    if isinstance(value, list):
        return [without_fair_deal(v) for v in value]
    return value


def check_view(view: dict[str, Any], me: str) -> None:
    assert set(view) == {"room", "players", "hand", "game"}
    g = view["game"]
    if g is not None:  # the deal committed to from the start, its seed shown only once it is over
        assert re.fullmatch(r"[0-9a-f]{64}", g["deal_commitment"]), g
        assert ("deal_seed" in g) == (g["winner"] is not None), g
        if "deal_seed" in g:
            assert hashlib.sha256(g["deal_seed"].encode()).hexdigest() == g["deal_commitment"]
    seated = any(p["id"] == me for p in view["players"])
    for p in view["players"]:
        assert set(p) <= PLAYER_KEYS and isinstance(p["cards"], int), p
    if g is None:
        assert view["hand"] == []
        return
    in_game = seated and view["room"]["status"] != "lobby"
    over = g["winner"] is not None
    assert set(g) <= GAME_KEYS | (OVER_KEYS if over else set()) | (OWN_KEYS if in_game else set()), g.keys()
    if in_game:
        mine = next(p for p in view["players"] if p["id"] == me)
        assert len(view["hand"]) == mine["cards"]
        assert set(g["legal"]["play"]) <= set(view["hand"])
        assert "drawn" not in g or g["drawn"] in view["hand"]
    else:
        assert view["hand"] == [] and "legal" not in g
    if g["pending"] is not None:
        assert ("card" in g["pending"]) == (g["pending"]["player"] == me), g["pending"]
        if "card" in g["pending"]:
            # a colour/target/top play waits in the chooser's hand; a roulette's target names
            # the colour of the roulette already on top (public)
            waiting = g["pending"]["card"]
            if g["pending"]["choice"] == "roulette_color":
                assert waiting == g["top"]
            else:
                assert waiting in view["hand"]
    deck = sum(view["room"]["rules"]["deck"].values())
    held = sum(p["cards"] for p in view["players"])
    assert held + g["draw_pile"] + g["discard_pile"] + g["set_aside"] == deck


def audit(c: Client, hidden: list[str], others_held: dict[tuple[int, int], set[str]]) -> int:
    """Check every message ``c`` received; returns how many cards other players held that
    ``c`` never saw in its messages (the audit's reach)."""
    me = c.you
    known: set[str] = set()  # public cards so far and every card ever in c's own hand
    rounds_seen: dict[tuple[int, int], set[str]] = {}
    view: dict[str, Any] | None = None
    for m in c.messages:
        text = json.dumps(without_fair_deal(m))
        for secret in hidden:
            assert secret not in text, f"a token or seed reached {me}: {m}"
        assert not HEX32.search(text), m
        if m["type"] not in ("welcome", "patch"):
            assert not cards_in(m) - known - set(view["hand"] if view else []), m
            continue
        before = view
        if m["type"] == "welcome":
            assert m["you"] == me
            view, events = m["state"], m["log"]  # what happened lately, checked as any event
        else:
            assert view is not None
            view, events = jsonpatch.apply_patch(view, m["ops"]), m["events"]
        check_view(view, me)
        for e in events:
            assert "deal_seed" not in e or e["kind"] == "round_over", e
            assert "deal_commitment" not in e or e["kind"] == "started", e
            if e["kind"] in SECRET_KINDS:
                assert ("cards" in e) == (e["player"] == me), e
                if "cards" in e:
                    assert len(e["cards"]) == e["count"]
            elif e["kind"] not in ("discarded", "roulette"):
                assert "cards" not in e, e
        g = view["game"] or {}
        allowed = (known | public_cards(events) | set(view["hand"])
                   | (set(before["hand"]) if before else set()))
        allowed |= {x for e in events if e.get("player") == me for x in e.get("cards", ())}
        if g:
            allowed.add(g["top"])
            for hand in (g.get("revealed") or {}).values():
                allowed.update(hand)
        if before and before["game"]:
            allowed.add(before["game"]["top"])
        leaked = cards_in(m) - allowed
        assert not leaked, (me, leaked, m)
        known = allowed
        rnd = (view["room"]["match"], view["room"]["round"])  # a new match counts its rounds from 1
        rounds_seen.setdefault(rnd, set()).update(cards_in(m))
    return sum(len(others_held.get(r, set()) - seen) for r, seen in rounds_seen.items())


@pytest.mark.settings(clock_speed=50, bot_delay_ms=500, bot_catch_delay_ms=1500,
                      reconnect_grace_ms=10_000_000)
async def test_no_message_carries_hidden_information(server, backend):
    rng = random.Random(20240611 if backend == "fake" else 99)
    r = real_redis() if backend == "real" else None
    rooms = await asyncio.wait_for(
        asyncio.gather(*(audit_room(server, random.Random(rng.random()), r) for _ in range(AUDIT_ROOMS))), 80)
    hidden = [t for _, tokens in rooms for t in tokens]
    if r is not None:
        assert len(hidden) > sum(len(clients) for clients, _ in rooms)  # the seeds are in
    reach = 0
    finished: set[tuple[str, tuple[int, int]]] = set()
    for clients, _ in rooms:
        # per round, the cards each player held: from its own hand over time, and the reveal
        held: dict[str, dict[tuple[int, int], set[str]]] = {}
        for c in clients:
            for _, m, after in patches(c):
                rnd = (after["room"]["match"], after["room"]["round"])
                held.setdefault(c.you, {}).setdefault(rnd, set()).update(after["hand"])
                for pid, hand in ((after["game"] or {}).get("revealed") or {}).items():
                    held.setdefault(pid, {}).setdefault(rnd, set()).update(hand)
                if any(e["kind"] == "round_over" for e in m["events"]):
                    finished.add((c.code, rnd))  # (the host may have been away at the end)
        for c in clients:
            others: dict[tuple[int, int], set[str]] = {}
            for pid, by_round in held.items():
                if pid != c.you:
                    for rnd, cards in by_round.items():
                        others.setdefault(rnd, set()).update(cards)
            reach += audit(c, hidden, others)
            assert c.gaps == 0
            await c.close()
    assert len(finished) == 2 * AUDIT_ROOMS
    assert reach > 0  # other players held cards the audited players never saw
    # the audit itself sees a leak: another player's draw with its cards, a token
    c = rooms[0][0][0]
    other = next(p["id"] for p in c.view["players"] if p["id"] != c.you)
    base = {"type": "patch", "version": c.version + 1, "now": 1, "ops": []}
    leaks = [{**base, "events": [{"kind": "drew", "player": other, "count": 1, "cards": ["g-3"]}]},
             {**base, "events": [{"kind": "reaction", "player": other, "reaction": hidden[1]}]}]
    for leak in leaks:
        with pytest.raises(AssertionError):
            audit(SimpleNamespace(you=c.you, messages=[*c.messages, leak]), hidden, {})
