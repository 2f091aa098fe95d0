"""Bots' searches off the event loop (app.processes.thinkers, docs/server.md "Bots off the loop"):
a tick hands a hard bot's turn to the workers and commits nothing; the move comes back as a
``bot_move`` for the version it was asked at, and is applied only if the room is still there:
otherwise the bot is asked again, for the room as it is. The worker gets the seat's view and its
bot's memory, nothing more; under load each search gets less time, never the table more wait."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import fakeredis
import orjson
import pytest

from app.core.clock import StepClock
from app.core.settings import Settings
from app.processes.hub import Hub
from app.processes.thinkers import MIN_BUDGET_MS, BotPool
from app.rooms import lobby, play
from app.rooms.intent import Intent
from app.rooms.outcomes import NoChange
from app.storage.store import RoomStore
from engine import Action, autoplay, view_for
from engine.ai.memory import Memory
from engine.ai.think import Thought, think

CODE = "BOTW"


class HeldThinker:
    """Searches the test answers when it likes."""

    def __init__(self) -> None:
        self.asked: list[tuple[Thought, asyncio.Future[Action | None]]] = []

    def budget_ms(self) -> float:
        return 5.0

    def submit(self, thought: Thought) -> asyncio.Future[Action | None]:
        done: asyncio.Future[Action | None] = asyncio.get_running_loop().create_future()
        self.asked.append((thought, done))
        return done


async def _room(hub: Hub, clock: StepClock) -> tuple[str, str]:
    """A started room of a human host (seat 0, to play first) and one hard bot."""
    room, host, _ = lobby.new_room(CODE, "host", {"turn_timer_s": 0}, clock.ms)
    room.version = 1
    await hub.store.commit(CODE, None, 1, orjson.dumps(room))
    for run in (lambda loaded, now: lobby.add_bot(loaded, host, "hard"),
                lambda loaded, now: lobby.start(loaded, host, now)):
        assert (await hub.submit(CODE, Intent("lobby", run)))["type"] == "ack"
    loaded = hub.actor(CODE).loaded
    assert loaded is not None
    bot = next(s.id for s in loaded.room.seats if s.bot)
    return host, bot


def _actor(hub: Hub) -> str:
    game = hub.actor(CODE).loaded.game  # type: ignore[union-attr]
    return game.players[game.pending.player if game.pending is not None else game.turn]


async def _settle(hub: Hub) -> None:
    """Whatever was queued by now (a search's answer queues its bot_move from a callback: one
    turn of the loop) has run."""
    actor = hub.actor(CODE)
    while True:
        await asyncio.sleep(0)
        last: list[bool] = []

        def run(loaded: Any, now: int, last: list[bool] = last) -> Any:
            last.append(actor.inbox.empty())  # nothing behind it: nothing runs after it
            raise NoChange

        await hub.submit(CODE, Intent("noop", run))  # (it loads the room, if need be)
        if last and last[0]:
            return


async def _version(hub: Hub) -> int:
    loaded = await hub.actor(CODE).load()
    assert loaded is not None
    return loaded.room.version


async def _host_moves(hub: Hub, host: str, clock: StepClock) -> None:
    """The host plays as the turn timer would for them, until the bot's turn (or the end)."""
    while _actor(hub) == host and hub.actor(CODE).loaded.game.winner is None:  # type: ignore[union-attr]
        game = hub.actor(CODE).loaded.game  # type: ignore[union-attr]
        action = autoplay.auto_action(game.clone(), game.players.index(host))

        def run(loaded: Any, now: int, action: Action = action) -> Any:
            return play.game_action(loaded, host, action, now)

        clock.ms += 10
        assert (await hub.submit(CODE, Intent("play", run)))["type"] == "ack"


async def _at_the_bots_turn(settings: Settings) -> tuple[Hub, StepClock, HeldThinker, str, str] | None:
    """A hub whose searches the test answers, its room played by the host up to the bot's turn
    (None: a one-card round ended first, nothing to check)."""
    clock = StepClock()
    hub = Hub(settings, RoomStore(fakeredis.FakeAsyncRedis(), "t", 3_600_000), clock, publishes=False)
    thinker = hub.services.thinker = HeldThinker()
    host, bot = await _room(hub, clock)
    await _host_moves(hub, host, clock)
    if hub.actor(CODE).loaded.game.winner is not None:  # type: ignore[union-attr]
        return None
    assert _actor(hub) == bot
    return hub, clock, thinker, host, bot


async def test_a_search_for_an_older_version_is_never_applied_and_the_bot_is_asked_again():
    at = await _at_the_bots_turn(Settings(bot_delay_ms=0, bot_workers=0))
    if at is None:
        return
    hub, clock, thinker, host, bot = at
    version = hub.actor(CODE).loaded.room.version  # type: ignore[union-attr]
    await hub.submit(CODE, hub.actor(CODE).tick_intent())
    await hub.submit(CODE, hub.actor(CODE).tick_intent())  # fired twice: one search
    assert len(thinker.asked) == 1
    assert hub.actor(CODE).loaded.room.version == version  # nothing committed while it thinks
    first, answer = thinker.asked[0]
    # the worker gets the bot's seat's view and its memory, nothing else
    game = hub.actor(CODE).loaded.game  # type: ignore[union-attr]
    assert first.me == bot and first.level == "hard" and isinstance(first.memory, Memory)
    assert first.view["hand"] == game.hands[game.players.index(bot)]
    assert "hand" not in str([p for p in first.view["players"]])
    assert first.view == {**view_for(game, bot, None, clock.ms),
                          "game": {**view_for(game, bot, None, clock.ms)["game"],
                                   "legal": {**view_for(game, bot, None, clock.ms)["game"]["legal"],
                                             "catch": []}}}
    # the room moves on (a reaction) before the search comes back
    clock.ms += 2000
    react = lobby.react
    assert (await hub.submit(CODE, Intent("react", lambda loaded, now: react(loaded, host, "gg", now, 0))))[
        "type"] == "ack"
    moved_on = hub.actor(CODE).loaded.room.version  # type: ignore[union-attr]
    answer.set_result(think(first))
    await _settle(hub)
    assert hub.actor(CODE).loaded.room.version == moved_on  # not applied to the newer room
    assert len(thinker.asked) == 2 and thinker.asked[1][0].seed != first.seed  # asked again
    second, again = thinker.asked[1]
    move = think(second)
    again.set_result(move)
    await _settle(hub)
    loaded = hub.actor(CODE).loaded
    assert loaded is not None and loaded.room.version > moved_on  # applied
    assert loaded.game.players[loaded.game.turn] != bot or loaded.game.hands != game.hands  # type: ignore[union-attr]
    # (a skip can give the bot its turn again: a search for the new version)
    assert all(v == loaded.room.version for _, v in hub.actor(CODE)._thinking)
    hub.actor(CODE).task.cancel()


async def test_a_search_the_workers_never_answer_does_not_hold_the_table():
    """Workers starved of CPU (their idle class on a saturated machine) answer late or never: a
    tick that finds the search overdue decides on the loop, and the late answer is dropped."""
    at = await _at_the_bots_turn(Settings(bot_delay_ms=0, bot_workers=0, bot_search_overdue_ms=1500))
    if at is None:
        return
    hub, clock, thinker, _, _ = at
    version = hub.actor(CODE).loaded.room.version  # type: ignore[union-attr]
    await hub.submit(CODE, hub.actor(CODE).tick_intent())
    clock.ms += 1499
    await hub.submit(CODE, hub.actor(CODE).tick_intent())  # not overdue yet: still waiting
    assert len(thinker.asked) == 1
    assert hub.actor(CODE).loaded.room.version == version  # type: ignore[union-attr]
    clock.ms += 1
    await hub.submit(CODE, hub.actor(CODE).tick_intent())
    await _settle(hub)  # (the tick its move queued may find nothing due, and drop the cache)
    decided = await _version(hub)
    assert decided > version  # the bot moved without its search
    first, late = thinker.asked[0]
    late.set_result(think(first))
    await _settle(hub)
    assert await _version(hub) == decided  # the late answer changed nothing
    hub.actor(CODE).task.cancel()


async def test_a_failed_search_is_made_on_the_loop():
    at = await _at_the_bots_turn(Settings(bot_delay_ms=0, bot_workers=0))
    if at is None:
        return
    hub, _, thinker, _, _ = at
    version = hub.actor(CODE).loaded.room.version  # type: ignore[union-attr]
    try:
        await hub.submit(CODE, hub.actor(CODE).tick_intent())
        thinker.asked[0][1].set_exception(RuntimeError("worker died"))
        await _settle(hub)
        loaded = hub.actor(CODE).loaded
        assert loaded is not None and loaded.room.version > version  # the move was made here
        # (a skip can give the bot its turn again: a search for the new version)
        assert len(thinker.asked) == 1 or _actor(hub) == thinker.asked[1][0].me
    finally:
        hub.actor(CODE).task.cancel()


async def test_while_a_search_runs_the_index_wakes_the_room_only_once_it_is_overdue():
    """The bot's due time, gone by, stayed in the deadline index while its worker searched: each
    wake-up of any process's scheduler fired the room again (14,000 useless ticks in 30 s at
    2,000 rooms, ``bench.city``), and rooms waiting on searches took the first places the
    scheduler reads from the index. Now the index holds when the search runs late."""
    at = await _at_the_bots_turn(Settings(bot_delay_ms=0, bot_workers=0, bot_search_overdue_ms=1500))
    if at is None:
        return
    hub, clock, thinker, _, _ = at
    asked_at = clock.ms
    await hub.submit(CODE, hub.actor(CODE).tick_intent())
    assert len(thinker.asked) == 1
    assert await hub.store.due_rooms(asked_at + 1499) == []
    assert await hub.store.due_rooms(asked_at + 1500) == [CODE]
    assert hub.scheduler.local_due[CODE] == asked_at + 1500
    version = await _version(hub)
    first, answer = thinker.asked[0]
    answer.set_result(think(first))
    await _settle(hub)
    moved = await _version(hub)
    assert moved > version  # the answer applied
    # (a skip can give the bot its turn again: a search for the new version)
    assert all(asked == moved for _, asked in hub.actor(CODE)._thinking)
    hub.actor(CODE).task.cancel()


async def test_a_bot_s_move_queues_another_tick_only_when_more_is_due():
    """Each step a tick made queued another tick, which mostly found nothing due and read the
    room back from Redis (3,600 in 30 s at 2,000 rooms): now only when a step is due at once."""
    at = await _at_the_bots_turn(Settings(bot_delay_ms=0, bot_workers=0))
    if at is None:
        return
    hub, _, thinker, host, _ = at
    actor = hub.actor(CODE)
    queued: list[int] = []
    real_again = actor._tick_again

    def again() -> None:
        queued.append(1)
        real_again()

    actor._tick_again = again  # type: ignore[method-assign]
    await hub.submit(CODE, actor.tick_intent())
    first, answer = thinker.asked[0]
    answer.set_result(think(first))
    await _settle(hub)
    loaded = actor.loaded
    assert loaded is not None and loaded.game is not None
    if loaded.game.winner is None and _actor(hub) == host:  # (a skip or a reverse: the bot again)
        assert queued == []  # the host's turn: nothing due, nothing queued
        assert actor.loaded is loaded  # and the room not read back
    actor.task.cancel()


def test_a_workers_search_is_the_one_the_tournament_measured_and_the_loops_is_wall_timed(monkeypatch):
    """The server's hard seats search as engine.ai.tournament measures by default (85 ms of the
    worker's CPU time, engine.ai.hard.SEARCH_BUDGET_MS); a search made on the loop instead
    (no workers, or an overdue one) is bounded by the wall clock, which the other rooms wait on."""
    import engine.ai.think as thinking
    from app.rooms import bot_seats
    from engine import new_game
    from engine.ai import make_bot
    from engine.ai.hard import SEARCH_BUDGET_MS
    from engine.rules import make_rules

    settings = Settings()
    assert settings.hard_bot_budget_ms == SEARCH_BUDGET_MS
    made: list[Any] = []

    def recording(*args: Any, **options: Any) -> Any:
        made.append(bot := make_bot(*args, **options))
        return bot

    monkeypatch.setattr(thinking, "make_bot", recording)
    rules = make_rules({"turn_timer_s": 0})
    state, _ = new_game(["a", "b", "c"], rules, "budget")
    me = state.players[state.turn]
    think(Thought("hard", me, rules, Memory(me), view_for(state, me), "seed", settings.hard_bot_budget_ms))
    assert made and made[0].clock is time.process_time and made[0].budget_ms == SEARCH_BUDGET_MS
    loaded: Any = SimpleNamespace(room=SimpleNamespace(code="WALL", rules={"turn_timer_s": 0}, round=1),
                                  game=SimpleNamespace(seed="budget"))
    on_the_loop: Any = bot_seats.bot_for(loaded, me, "hard", settings)
    assert on_the_loop.clock is time.perf_counter and on_the_loop.budget_ms == settings.bot_inline_budget_ms


def test_under_load_each_search_gets_less_time():
    pool = BotPool(2, 40.0)
    assert pool.budget_ms() == 40.0
    pool.busy = 1
    assert pool.budget_ms() == 40.0  # a worker is free
    pool.busy = 3
    assert pool.budget_ms() == 20.0
    pool.busy = 1000
    assert pool.budget_ms() == MIN_BUDGET_MS


async def test_a_worker_only_gets_the_cores_no_table_wants():
    """Linux's idle class, not a nice level: at nice 10 a busy worker still took a tenth of a
    core from the server's loop whenever both wanted it."""
    pool = BotPool(1, 5.0)
    try:
        worker = await asyncio.wait_for(pool.call(os.getpid), 60)
        assert worker != os.getpid()
        assert os.sched_getscheduler(worker) == os.SCHED_IDLE
        assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the server itself keeps its class
    finally:
        pool.close()


async def test_hard_bots_play_through_real_workers():
    """One worker process; a table of a human and a hard bot plays on, the bot's moves made by
    the worker and committed by the room's actor."""
    clock = StepClock()
    hub = Hub(Settings(bot_delay_ms=0, bot_workers=1, hard_bot_budget_ms=5),
              RoomStore(fakeredis.FakeAsyncRedis(), "t", 3_600_000), clock, publishes=False)
    pool = hub.bot_pool
    assert pool is not None
    searches: list[asyncio.Future[Action | None]] = []

    class Watched:
        def budget_ms(self) -> float:
            return pool.budget_ms()

        def submit(self, thought: Thought) -> asyncio.Future[Action | None]:
            searches.append(pool.submit(thought))
            return searches[-1]

    hub.services.thinker = Watched()
    try:
        host, _ = await _room(hub, clock)
        bot_moves = 0
        for _ in range(120):
            loaded = hub.actor(CODE).loaded
            assert loaded is not None
            if bot_moves >= 3:
                break
            if loaded.game.winner is not None:  # type: ignore[union-attr]
                # a deal that ends quickly: the next round, until the bot has moved enough
                def again(loaded: Any, now: int) -> Any:
                    return lobby.rematch(loaded, host, now)

                assert (await hub.submit(CODE, Intent("rematch", again)))["type"] == "ack"
                continue
            if _actor(hub) == host:
                await _host_moves(hub, host, clock)
                continue
            version = loaded.room.version
            await hub.submit(CODE, hub.actor(CODE).tick_intent())
            # the search this tick started, or one a tick queued after the bot's last move did
            for search in [s for s in searches if not s.done()]:
                assert await asyncio.wait_for(search, 60) is not None
            await _settle(hub)  # the bot_move it queued
            assert hub.actor(CODE).loaded.room.version > version  # type: ignore[union-attr]
            bot_moves += 1
        assert bot_moves >= 3
        assert searches
    finally:
        hub.actor(CODE).task.cancel()
        pool.close()


async def test_a_lost_worker_fails_its_search_and_another_takes_the_next():
    """A worker killed mid-search (the OOM killer, an operator): its table decides on the loop
    (the search fails), and the pool starts another worker for what follows."""
    pool = BotPool(1, 5.0)
    try:
        first = await asyncio.wait_for(pool.call(os.getpid), 60)
        stuck = pool.call(time.sleep, 30)
        os.kill(first, signal.SIGKILL)
        with pytest.raises(RuntimeError, match="lost"):
            await asyncio.wait_for(stuck, 60)
        second = await asyncio.wait_for(pool.call(os.getpid), 60)
        assert second not in (first, os.getpid())
        assert pool.busy == 0
    finally:
        pool.close()


async def test_the_pool_runs_no_thread_beside_the_loop():
    """The loop reads the workers' pipes itself: an executor's manager and feeder threads made
    the loop wait for the interpreter lock inside each submit on a busy machine."""
    before = threading.active_count()
    pool = BotPool(2, 5.0)
    try:
        answers = await asyncio.wait_for(asyncio.gather(*(pool.call(abs, -i) for i in range(20))), 60)
        assert answers == list(range(20))
        assert threading.active_count() == before
    finally:
        pool.close()


@contextlib.asynccontextmanager
async def _held_search(pool: BotPool) -> AsyncIterator[tuple[asyncio.Future[Any], Callable[[], None]]]:
    """A search a worker is making until ``release()``: it reads a FIFO, and opening the FIFO's
    writing end waits for the worker to open the reading one, so inside the block it is searching
    (no sleep to guess when). Yields the search's future (its answer "done") and ``release``."""
    with tempfile.TemporaryDirectory() as tmp:
        gate = Path(tmp, "gate")
        os.mkfifo(gate)
        searching = pool.call(Path.read_text, gate)
        fd = await asyncio.wait_for(asyncio.to_thread(os.open, gate, os.O_WRONLY), 60)

        def release() -> None:
            os.write(fd, b"done")
            os.close(fd)

        yield searching, release


async def test_a_worker_whose_server_hangs_up_mid_search_leaves_quietly():
    """A server stopping closes its end of each pipe; a worker still searching then finds no one
    to answer. It leaves without a traceback (CI once failed on the one printed at a stop)."""
    pool = BotPool(1, 5.0)
    try:
        async with _held_search(pool) as (_, release):
            worker = pool._pool[0]
            pool._drop(worker)  # the server hangs up
            release()  # the search ends; its answer has nowhere to go
        await asyncio.to_thread(worker.proc.join, 60)
        assert worker.proc.exitcode == 0
    finally:
        pool.close()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_stop_signal_to_the_whole_group_leaves_the_workers_to_their_server(capfd, signum):
    """Ctrl-C in a terminal (SIGINT), or a service manager stopping the whole group (SIGTERM),
    reaches the server and its workers alike: the server shuts down gracefully and closes the
    workers' pipes, so a worker neither dies mid-search nor prints a traceback."""
    pool = BotPool(1, 5.0)
    try:
        worker = await asyncio.wait_for(pool.call(os.getpid), 60)
        async with _held_search(pool) as (searching, release):
            os.kill(worker, signum)
            release()
        assert await asyncio.wait_for(searching, 60) == "done"  # the search was made
        assert await asyncio.wait_for(pool.call(os.getpid), 60) == worker  # the worker is still there
    finally:
        pool.close()
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_stop_signal_while_a_worker_is_still_starting_leaves_it_be(capfd, signum):
    """The same signal a moment after the server starts a worker, while the worker is still
    importing what it runs (about a second): it is ignored there too, and the worker serves."""
    pool = BotPool(1, 5.0)
    try:
        answer = pool.call(os.getpid)
        worker = pool._pool[0].proc.pid  # spawned (its interpreter is starting), not yet serving
        os.kill(worker, signum)
        assert await asyncio.wait_for(answer, 60) == worker
    finally:
        pool.close()
    assert "Traceback" not in capfd.readouterr().err
