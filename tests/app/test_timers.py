"""The room's timed steps over real sockets (rules.md "Timers", "Choices", "UNO and Catch").

The server clock runs fast (``CLOCK_SPEED``), so minute-long rule timers pass in milliseconds;
no test sleeps: each waits on the messages the server sends, with a timeout.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import jsonpatch
import pytest

from engine.ai.reaction import REACTIONS

from .harness import Client, ServerProcess

ACTS = ("played", "drew", "took_stack", "passed", "roulette", "uno")  # first event of a move
COLORS = ("red", "yellow", "green", "blue")


# -- helpers ----------------------------------------------------------------------------------

async def open_room(server: ServerProcess, names: tuple[str, ...] = ("Ann", "Bob"),
                    rules: dict[str, Any] | None = None, bots: int = 0) -> list[Client]:
    """A room with ``names`` (the first is the host) and ``bots`` easy bots, started."""
    host = server.create(names[0], rules)
    clients = [await Client(server, host["code"], host["token"]).connect()]
    for name in names[1:]:
        joined = server.join(host["code"], name)
        clients.append(await Client(server, host["code"], joined["token"]).connect())
    for _ in range(bots):
        assert (await clients[0].send({"type": "add_bot", "level": "easy"}))["type"] == "ack"
    assert (await clients[0].send({"type": "start"}))["type"] == "ack"
    await settle(clients)
    return clients


async def catch_up(c: Client, version: int, timeout: float = 10) -> None:
    if c.version < version:
        await c.until(lambda m: c.version >= version, timeout)


async def settle(clients: list[Client]) -> None:
    """Every client has read up to the newest version any of them has seen."""
    top = max(c.version for c in clients)
    for c in clients:
        await catch_up(c, top)


async def wait_event(c: Client, pred: Callable[[dict[str, Any]], bool], timeout: float = 10,
                     start: int = 0) -> dict[str, Any]:
    """The first event at index >= ``start`` of ``c.events`` that satisfies ``pred`` (read on
    until it comes)."""
    def found() -> dict[str, Any] | None:
        return next((e for e in c.events[start:] if pred(e)), None)

    if found() is None:
        await c.until(lambda m: m["type"] == "patch" and found() is not None, timeout)
    event = found()
    assert event is not None
    return event


def kind(k: str, **data: Any) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e["kind"] == k and all(e.get(f) == v for f, v in data.items())


def patches(c: Client) -> Iterator[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(view before, patch, view after) for every patch ``c`` received, rebuilt from its log."""
    view: dict[str, Any] | None = None
    for m in c.messages:
        if m["type"] == "welcome":
            view = m["state"]
        elif m["type"] == "patch":
            assert view is not None
            after = jsonpatch.apply_patch(view, m["ops"])
            yield view, m, after
            view = after


def actor(view: dict[str, Any]) -> str | None:
    g = view["game"]
    if view["room"]["status"] != "playing" or g is None:
        return None
    return g["pending"]["player"] if g["pending"] else g["turn"]


def most_held(hand: list[str]) -> str:
    """rules.md "Choices": the colour held most, ties red, yellow, green, blue."""
    counts = Counter(c[0] for c in hand if c[0] != "w")
    return max(COLORS, key=lambda name: (counts[name[0]], -COLORS.index(name)))


async def move(c: Client, *, expose: bool = False, avoid: Callable[[str], bool] = lambda card: False
               ) -> dict[str, Any]:
    """One legal move for ``c`` (it is their turn or choice): answer a choice, take a stack, else
    play a card (calling UNO unless ``expose``), else draw, else pass."""
    g = c.game
    assert g is not None
    legal, hand = g["legal"], c.view["hand"]
    pending = g["pending"]
    if pending and pending["player"] == c.you:
        field = pending["choice"] if pending["choice"] in ("target", "top") else "color"
        answer = await c.send({"type": "choose", field: legal["choose"][0]})
    elif g["stack"] and g["stack"]["target"] == c.you:
        answer = await c.send({"type": "draw"})
    else:
        # never a Discard All that could empty a short hand: these drives want a round to go on
        cards = [x for x in legal["play"] if not avoid(x) and not (x.endswith("-discard") and len(hand) <= 3)]
        if not cards and not legal["draw"] and not legal["pass"]:
            cards = legal["play"]  # nothing else is allowed
        if cards:
            card = cards[0]
            msg: dict[str, Any] = {"type": "play", "card": card}
            if card.startswith("w-") and card != "w-roulette":
                msg["color"] = most_held([x for x in hand if x != card])
            if card.endswith("-7") and c.view["room"]["rules"]["seven"] != "off":
                msg["target"] = next(p["id"] for p in c.view["players"]
                                     if p["id"] != c.you and not p["eliminated"])
            if len(hand) == 2 and not expose:
                msg["uno"] = True
            answer = await c.send(msg)
        elif legal["draw"]:
            answer = await c.send({"type": "draw"})
        else:
            assert legal["pass"], g
            answer = await c.send({"type": "pass"})
    assert answer["type"] == "ack", answer
    return answer


async def finish_turn(c: Client) -> None:
    while actor(c.view) == c.you:
        await move(c)


async def drive(clients: list[Client], stop: Callable[[], bool], *, exposers: tuple[str, ...] = (),
                timeout: float = 30) -> None:
    """Play the humans' moves (bots and timers move on their own) until ``stop()``; a finished
    round is followed by a rematch. Players in ``exposers`` never call UNO."""
    host = clients[0]
    by_id = {c.you: c for c in clients}

    async def loop() -> None:
        while not stop():
            status = host.view["room"]["status"]
            if status != "playing":
                assert (await host.send({"type": "rematch"}))["type"] == "ack"
                await host.until_view(lambda v: v["room"]["status"] == "playing")
                continue
            who = actor(host.view)
            c = by_id.get(who or "")
            if c is None:  # a bot's move, or nothing to do until a timer fires
                await host.until(lambda m: m["type"] == "patch")
            else:
                await catch_up(c, host.version)
                if actor(c.view) == c.you:
                    await move(c, expose=c.you in exposers)
            await settle(clients)  # every client reads on (a socket not read is dropped)

    try:
        await asyncio.wait_for(loop(), timeout)
    except TimeoutError:
        g = host.view["game"] or {}
        raise AssertionError(f"stuck at version {host.version}: {host.view['room']['status']}, "
                             f"actor {actor(host.view)}, stack {g.get('stack')}, exposed "
                             f"{g.get('exposed')}, last events {host.events[-6:]}") from None


def assert_now_everywhere(clients: list[Client]) -> None:
    for c in clients:
        for m in c.messages:
            if m["type"] in ("welcome", "patch"):
                assert isinstance(m["now"], int) and m["now"] > 0, m


# -- the turn timer ---------------------------------------------------------------------------

@pytest.mark.settings(clock_speed=100)
async def test_turn_timer_acts_for_an_idle_human_and_the_turn_moves_on(server):
    """Three idle humans: every turn times out; the server takes a stack aimed at the idle
    player, else plays or draws for them, and a fresh turn timer starts."""
    clients = await open_room(server, ("Ann", "Bob", "Cat"),
                              {"turn_timer_s": 10, "seven": "off", "mercy_limit": 60})
    ann = clients[0]
    started = next(m for _, m, after in patches(ann) if any(e["kind"] == "started" for e in m["events"]))
    assert ann.view["game"]["turn"] == ann.you
    assert ann.view["game"]["turn_deadline"] == started["now"] + 10_000

    def enough() -> bool:
        events = ann.events
        timeouts = [i for i, e in enumerate(events) if e["kind"] == "timed_out"]
        return len(timeouts) >= 6 and any(
            events[i + 1]["kind"] == "took_stack" for i in timeouts if i + 1 < len(events))

    async def idle(c: Client) -> None:  # nobody moves; read until ann has seen enough
        while not enough():
            try:
                await c.recv(0.1)
            except TimeoutError:
                continue
            if c is ann and ann.view["room"]["status"] != "playing":
                assert (await ann.send({"type": "rematch"}))["type"] == "ack"

    await asyncio.wait_for(asyncio.gather(*(idle(c) for c in clients)), 40)
    await settle(clients)
    assert_now_everywhere(clients)

    timeouts = 0
    moved_on = 0
    for before, m, after in patches(ann):
        events = m["events"]
        for i, e in enumerate(events):
            if e["kind"] != "timed_out":
                continue
            timeouts += 1
            who = e["player"]
            g = before["game"]
            assert actor(before) == who
            assert g["turn_deadline"] is not None and m["now"] >= g["turn_deadline"]
            nxt = events[i + 1]
            assert nxt.get("player") == who, events
            if g["pending"]:  # a choice waits on them: the default one is made
                assert nxt["kind"] in ("roulette", "played"), events
                if who == ann.you and g["pending"]["choice"] in ("color", "roulette_color"):
                    hand = list(before["hand"])
                    if "card" in g["pending"] and g["pending"]["choice"] == "color":
                        hand.remove(g["pending"]["card"])
                    color = next(x["color"] for x in events if x["kind"] in ("roulette", "color"))
                    assert color == most_held(hand), (hand, events)
            elif g["stack"]:  # a stack aimed at them: they take it
                assert g["stack"]["target"] == who
                assert nxt["kind"] == "took_stack", events
                eliminated = any(x["kind"] == "eliminated" and x["player"] == who for x in events)
                assert nxt["count"] == g["stack"]["total"] or eliminated, events
                assert ("cards" in nxt) == (who == ann.you)  # only the taker's copy has them
            else:  # a card is played, or drawn (then the drawn card is played)
                assert nxt["kind"] in ("played", "drew"), events
                assert any(x["kind"] == "played" and x["player"] == who for x in events), events
            ag = after["game"]
            if after["room"]["status"] == "playing":
                # one turn ended: a fresh timer for whoever plays now
                assert ag["turn_deadline"] == m["now"] + 10_000
                played = [x["card"] for x in events if x["kind"] == "played"]
                if ag["turn"] != who:
                    moved_on += 1
                else:  # only Skip Everyone gives the same player another turn (three players)
                    assert played and played[-1].endswith("-skipall"), events
    assert timeouts >= 6 and moved_on >= 3
    # the taker's own copy of a stack taken on their behalf carries the cards; no one else's does
    for c in clients:
        for e in c.events:
            if e["kind"] in ("took_stack", "drew", "caught"):
                assert ("cards" in e) == (e["player"] == c.you), e
    for c in clients:
        assert c.gaps == 0
        await c.close()


# -- the catch window -------------------------------------------------------------------------

CATCH_RULES = {"hand_size": 2, "seven": "off", "zero": "off", "turn_timer_s": 0, "mercy_limit": 60}


@pytest.mark.settings(clock_speed=20)
async def test_catch_window_closes_then_a_catch_is_refused(server):
    clients = await open_room(server, ("Ann", "Bob"), {**CATCH_RULES, "catch_window_s": 4})
    ann, bob = clients
    ids = (ann.you, bob.you)
    await drive(clients, lambda: any(e["kind"] == "exposed" for e in ann.events), exposers=ids)
    await settle(clients)
    exposed = next(e for e in ann.events if e["kind"] == "exposed")
    victim = next(c for c in clients if c.you == exposed["player"])
    catcher = next(c for c in clients if c is not victim)
    # the window is shown with its end: the exposing move's time plus catch_window_s
    when, shown = next((m, after) for _, m, after in patches(catcher)
                       if any(e["kind"] == "exposed" for e in m["events"]))
    assert shown["game"]["exposed"] == [{"player": victim.you, "until": when["now"] + 4000}]
    assert shown["game"]["legal"]["catch"] == [victim.you]
    assert len(victim.view["hand"]) == 1
    # nobody moves: the window closes on its own, as a change like any other
    closed = await wait_event(catcher, kind("window_closed", player=victim.you), timeout=10)
    assert closed
    closing = next(m for _, m, _ in patches(catcher)
                   if any(e["kind"] == "window_closed" for e in m["events"]))
    assert closing["now"] >= when["now"] + 4000
    assert catcher.view["game"]["exposed"] == [] and catcher.view["game"]["legal"]["catch"] == []
    version = catcher.version
    answer = await catcher.send({"type": "catch", "target": victim.you})
    assert answer["type"] == "error" and answer["code"] == "not_exposed", answer
    assert catcher.version == version  # a refused catch changes nothing
    await settle(clients)
    assert len(victim.view["hand"]) == 1
    for c in clients:
        assert c.gaps == 0
        await c.close()


@pytest.mark.settings(clock_speed=1)
async def test_a_catch_within_the_window_costs_the_penalty(server):
    clients = await open_room(server, ("Ann", "Bob"),
                              {**CATCH_RULES, "catch_window_s": 30, "uno_penalty": 4})
    ann, bob = clients
    await drive(clients, lambda: any(e["kind"] == "exposed" for e in ann.events),
                exposers=(ann.you, bob.you))
    await settle(clients)
    exposed = next(e for e in ann.events if e["kind"] == "exposed")
    victim = next(c for c in clients if c.you == exposed["player"])
    catcher = next(c for c in clients if c is not victim)
    held = list(victim.view["hand"])
    # catching oneself is refused and costs nothing
    answer = await victim.send({"type": "catch", "target": victim.you})
    assert answer["type"] == "error" and answer["code"] == "bad_target", answer
    start = len(catcher.events)
    answer = await catcher.send({"type": "catch", "target": victim.you})
    assert answer["type"] == "ack", answer
    caught = await wait_event(catcher, kind("caught", player=victim.you), start=start)
    assert caught["by"] == catcher.you and caught["count"] == 4 and "cards" not in caught
    mine = await wait_event(victim, kind("caught", player=victim.you))
    assert len(mine["cards"]) == 4
    await settle(clients)
    assert sorted(victim.view["hand"]) == sorted(held + mine["cards"])
    assert next(p for p in catcher.view["players"] if p["id"] == victim.you)["cards"] == 5
    assert catcher.view["game"]["exposed"] == []
    # caught once: a second catch is refused
    answer = await catcher.send({"type": "catch", "target": victim.you})
    assert answer["type"] == "error" and answer["code"] == "not_exposed", answer
    for c in clients:
        assert c.gaps == 0
        await c.close()


# -- bots -------------------------------------------------------------------------------------

@pytest.mark.settings(clock_speed=10, bot_catch_delay_ms=0)
async def test_a_bot_catches_an_exposed_human_after_its_delay(server):
    """Easy bots catch after their drawn reaction time (engine.ai.reaction), never quicker than
    the level's floor, within the window; sometimes neither notices, and the next exposure
    is waited for."""
    clients = await open_room(server, ("Ann",), {**CATCH_RULES, "catch_window_s": 10}, bots=2)
    ann = clients[0]

    def caught_ann() -> bool:
        return any(e["kind"] == "caught" and e["player"] == ann.you for e in ann.events)

    def ann_exposed() -> bool:
        g = ann.view["game"]
        return bool(g) and any(x["player"] == ann.you for x in g["exposed"])

    # ann never calls UNO and, once exposed, waits; bots play at once (a round a bot wins
    # before the catch is followed by a rematch)
    async def until_caught() -> None:
        while not caught_ann():
            await drive(clients, ann_exposed, exposers=(ann.you,))
            await ann.until_view(lambda v: caught_ann() or not ann_exposed())

    await asyncio.wait_for(until_caught(), 40)
    caught = next(e for e in ann.events if e["kind"] == "caught" and e["player"] == ann.you)
    bots = {p["id"] for p in ann.view["players"] if p["bot"]}
    assert caught["by"] in bots and caught["count"] == 2 and len(caught["cards"]) == 2
    # the catch came after the bot's reaction time, within the window
    log = list(patches(ann))
    at = next(i for i, (_, m, _) in enumerate(log)
              if any(e["kind"] == "caught" and e["player"] == ann.you for e in m["events"]))
    exposed_at = max(i for i, (_, m, _) in enumerate(log[:at])
                     if any(e["kind"] == "exposed" and e["player"] == ann.you for e in m["events"]))
    delay = log[at][1]["now"] - log[exposed_at][1]["now"]
    context = [(m["version"], m["now"], m["events"]) for _, m, _ in log[exposed_at - 2:at + 1]]
    assert REACTIONS["easy"].floor_ms <= delay < 10_000, (delay, context)
    await ann.close()


@pytest.mark.settings(clock_speed=100, bot_delay_ms=1000, bot_catch_delay_ms=500)
async def test_bots_play_their_seats_call_uno_and_make_their_own_choices(server):
    """One human and three bots play whole rounds: bots move after their think time, resolve
    the choices their cards need, and call UNO (or get caught); no turn of theirs times out."""
    # (random bots draw a lot under voluntary draws and go out by mercy: they must play here)
    clients = await open_room(server, ("Ann",), {"turn_timer_s": 60, "draw": "until_playable",
                                                 "hand_size": 5}, bots=3)
    ann = clients[0]
    rng = random.Random(7)
    bots = {p["id"] for p in ann.view["players"] if p["bot"]}

    def bot_chose() -> bool:
        return any(before["game"] and before["game"]["pending"]
                   and before["game"]["pending"]["player"] in bots
                   and after["game"]["pending"] is None and m["events"]
                   and m["events"][0].get("player") == before["game"]["pending"]["player"]
                   for before, m, after in patches(ann))

    def bot_one_card() -> bool:
        return any(e["kind"] in ("uno", "exposed") and e["player"] in bots for e in ann.events)

    def bot_moves_timed() -> int:
        """Bot moves so far, each checked to come at least its think time after the bot's
        turn (or choice) began."""
        started: tuple[str | None, int] = (None, 0)
        checked = 0
        for before, m, after in patches(ann):
            events = m["events"]
            mover = events[0].get("player") if events and events[0]["kind"] in ACTS else None
            if mover in bots and mover == actor(before):
                assert started[0] == mover and m["now"] - started[1] >= 1000, (started, m)
                checked += 1
            now_actor = actor(after)
            if now_actor != actor(before) or mover == now_actor:
                started = (now_actor, m["now"])
        return checked

    # rounds until bots have done each thing and made enough moves to judge their think time
    # (one short round can end after nine bot moves)
    rounds = 0
    while rounds < 12 and not (rounds and bot_chose() and bot_one_card() and bot_moves_timed() > 10):
        if ann.view["room"]["status"] != "playing":
            assert (await ann.send({"type": "rematch"}))["type"] == "ack"
            await ann.until_view(lambda v: v["room"]["status"] == "playing")

        async def play_round() -> None:
            while ann.view["room"]["status"] == "playing":
                if ann.my_turn():
                    answer = await ann.play_turn(rng)
                    assert answer["type"] == "ack", answer
                else:
                    await ann.until(lambda m: m["type"] == "patch")

        await asyncio.wait_for(play_round(), 30)
        rounds += 1
    assert bot_chose(), "no bot resolved a choice of its own"
    assert bot_one_card(), [(e, e["winner"] in bots) for e in ann.events if e["kind"] == "round_over"]
    assert not [e for e in ann.events if e["kind"] == "timed_out"]
    assert bot_moves_timed() > 10
    assert ann.gaps == 0
    await ann.close()


# -- absent players ---------------------------------------------------------------------------

WILD_DECK = {"r-3": 15, "y-3": 15, "g-3": 15, "b-3": 15, "r-5": 10, "y-5": 10, "g-5": 10,
             "b-5": 10, "w-wild": 30}
SEVEN_DECK = {f"{c}-{n}": 10 for c in "rygb" for n in (5, 7)}


@pytest.mark.settings(clock_speed=1)
async def test_a_colour_choice_of_a_player_who_drops_is_resolved_at_once(server):
    clients = await open_room(server, ("Ann", "Bob", "Cat"),
                              {"deck": WILD_DECK, "turn_timer_s": 0, "mercy_limit": 60})
    ann, bob, cat = clients
    assert actor(ann.view) == ann.you
    while "w-wild" not in ann.view["hand"]:
        assert (await ann.send({"type": "draw"}))["type"] == "ack"
    assert (await ann.send({"type": "play", "card": "w-wild"}))["type"] == "ack"
    assert ann.view["game"]["pending"] == {"player": ann.you, "choice": "color", "card": "w-wild"}
    await settle(clients)
    assert bob.view["game"]["pending"] == {"player": ann.you, "choice": "color"}
    rest = list(ann.view["hand"])
    rest.remove("w-wild")
    expected = most_held(rest)
    start = len(bob.events)
    await ann.close()
    gone = await wait_event(bob, kind("disconnected", player=ann.you), start=start)
    color = await wait_event(bob, kind("color", player=ann.you), start=start)
    assert gone and color["color"] == expected
    log = list(patches(bob))
    v_gone = next(m["version"] for _, m, _ in log if any(e["kind"] == "disconnected" for e in m["events"]))
    v_color = next(m["version"] for _, m, _ in log if any(e["kind"] == "color" for e in m["events"]))
    assert v_color == v_gone + 1  # at once: the very next change
    g = bob.view["game"]
    assert g["pending"] is None and g["top"] == "w-wild" and g["color"] == expected
    assert g["turn"] == bob.you
    assert next(p for p in bob.view["players"] if p["id"] == ann.you)["cards"] == len(rest)
    # play goes on
    await finish_turn(bob)
    await settle([bob, cat])
    assert actor(cat.view) == cat.you
    # ann comes back to her hand without the wild
    await ann.connect()
    assert sorted(ann.view["hand"]) == sorted(rest)
    for c in clients:
        assert c.gaps == 0
        await c.close()


@pytest.mark.settings(clock_speed=1)
async def test_a_target_choice_of_a_player_who_drops_goes_to_the_fewest_cards(server):
    clients = await open_room(server, ("Ann", "Bob", "Cat"),
                              {"deck": SEVEN_DECK, "seven": "swap", "turn_timer_s": 0,
                               "mercy_limit": 60})
    ann, bob, cat = clients

    async def play_a_five(c: Client, draws: int = 0) -> None:
        for _ in range(draws):
            assert (await c.send({"type": "draw"}))["type"] == "ack"
        while not any(x.endswith("-5") for x in c.game["legal"]["play"]):
            assert (await c.send({"type": "draw"}))["type"] == "ack"
        card = next(x for x in c.game["legal"]["play"] if x.endswith("-5"))
        assert (await c.send({"type": "play", "card": card}))["type"] == "ack"
        await settle(clients)

    # shape the hands so that the fewest-cards opponent is not simply the first seat
    await play_a_five(ann, draws=3)
    await play_a_five(bob, draws=6)
    await play_a_five(cat)
    assert actor(ann.view) == ann.you
    while not any(x.endswith("-7") for x in ann.game["legal"]["play"]):
        assert (await ann.send({"type": "draw"}))["type"] == "ack"
    seven = next(x for x in ann.game["legal"]["play"] if x.endswith("-7"))
    assert (await ann.send({"type": "play", "card": seven}))["type"] == "ack"
    assert ann.view["game"]["pending"] == {"player": ann.you, "choice": "target", "card": seven}
    await settle(clients)
    counts = {p["id"]: p["cards"] for p in bob.view["players"]}
    seats = [p["id"] for p in bob.view["players"]]
    expected = min((p for p in seats if p != ann.you), key=lambda p: (counts[p], seats.index(p)))
    given = list(ann.view["hand"])
    given.remove(seven)
    start = len(bob.events)
    await ann.close()
    swapped = await wait_event(bob, kind("swapped", a=ann.you), start=start)
    assert swapped["b"] == expected
    await settle([bob, cat])
    receiver = bob if expected == bob.you else cat
    assert sorted(receiver.view["hand"]) == sorted(given)
    assert bob.view["game"]["pending"] is None and bob.view["game"]["top"] == seven
    # play goes on with the next player
    nxt = next(c for c in (bob, cat) if actor(c.view) == c.you)
    await finish_turn(nxt)
    for c in (bob, cat):
        assert c.gaps == 0
        await c.close()


# -- reconnect grace --------------------------------------------------------------------------

@pytest.mark.settings(clock_speed=50, reconnect_grace_ms=20_000)
async def test_a_dropped_player_is_replaced_by_a_bot_after_the_grace(server):
    clients = await open_room(server, ("Ann", "Bob"), {"turn_timer_s": 0})
    ann, bob = clients
    # a drop within the grace: back in the same seat with the same token
    start = len(ann.events)
    await bob.close()
    await wait_event(ann, kind("disconnected", player=bob.you), start=start)
    await bob.connect()
    await wait_event(ann, kind("reconnected", player=bob.you), start=start)
    assert not next(p for p in ann.view["players"] if p["id"] == bob.you)["bot"]
    # a drop past the grace: a bot takes the seat until Bob comes back
    start = len(ann.events)
    await bob.close()
    await wait_event(ann, kind("disconnected", player=bob.you), start=start)
    replaced = await wait_event(ann, kind("replaced_by_bot", player=bob.you), start=start)
    assert replaced
    log = list(patches(ann))
    dropped = next(m["now"] for _, m, _ in reversed(log)
                   if any(e["kind"] == "disconnected" for e in m["events"]))
    gone = next(m["now"] for _, m, _ in log if any(e["kind"] == "replaced_by_bot" for e in m["events"]))
    assert gone - dropped >= 20_000
    seat = next(p for p in ann.view["players"] if p["id"] == bob.you)
    assert seat["bot"] and seat["connected"] and seat["level"] == "easy"
    # the bot plays bob's seat
    start = len(ann.events)
    await drive([ann], lambda: any(e["kind"] in ACTS and e.get("player") == bob.you
                                   for e in ann.events[start:]) or ann.view["room"]["status"] != "playing")
    assert any(e["kind"] in ACTS and e.get("player") == bob.you for e in ann.events[start:])
    # Bob's token is still good: his hello takes the seat back from the bot at once
    start = len(ann.events)
    await bob.connect()
    await wait_event(ann, kind("reconnected", player=bob.you), start=start)
    seat = next(p for p in ann.view["players"] if p["id"] == bob.you)
    assert not seat["bot"] and seat["connected"]
    assert bob.view["players"] == ann.view["players"] and len(bob.view["hand"]) == seat["cards"]
    assert ann.gaps == 0
    for c in (ann, bob):
        await c.close()
