"""The collector paced by the event loop (app/core/gc_pacing.py)."""

from __future__ import annotations

import asyncio
import gc
import sys
import time
import weakref

import pytest

from app.core import gc_pacing
from app.core.gc_pacing import (
    FULL_AT_LEAST_EVERY_S,
    FULL_AT_MOST_EVERY_S,
    MAX_WAIT_S,
    MIN_WAIT_S,
    CollectorPacer,
    idle_collection_within_s,
    paced_collector,
)


class Node:
    """Something a reference count alone cannot free once it points at itself."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def collector_off():
    """Automatic collection off for the test, so what is collected is what the pacer collected."""
    was = gc.isenabled()
    gc.disable()
    yield
    gc.unfreeze()  # (what the test's beats froze is the test's)
    if was:
        gc.enable()


@pytest.fixture
def short_pauses(monkeypatch):
    """Every collection counts as short (an idle process), whatever this machine's speed."""
    _short_pauses(monkeypatch)


def _short_pauses(monkeypatch) -> None:
    monkeypatch.setattr(gc_pacing, "PAUSE_TARGET_S", 1.0)


def _long_pauses(monkeypatch) -> None:
    monkeypatch.setattr(gc_pacing, "PAUSE_TARGET_S", 0.0)


def _garbage_in_old_generation() -> weakref.ref:
    node = Node()
    gc.collect(1)  # it survives a young and middle collection: now in the old generation
    assert any(o is node for o in gc.get_objects(2))
    ref = weakref.ref(node)
    del node
    return ref


def test_a_beat_frees_young_cycles(collector_off):
    ref = weakref.ref(Node())
    assert ref() is not None
    CollectorPacer().beat(MIN_WAIT_S)
    assert ref() is None


def _as_if_the_memory_doubled(pacer: CollectorPacer) -> None:
    """As if the memory in use had doubled since the last full collection."""
    pacer._blocks_after_full = sys.getallocatedblocks() // 3


def _started_pacer(**kwargs) -> CollectorPacer:
    """A pacer started as the app starts one: after freezing what is alive (app/main.py)."""
    gc.collect()
    gc.freeze()
    return CollectorPacer(**kwargs)


def _garbage_among_the_frozen(pacer: CollectorPacer, now_s: float | None = None) -> weakref.ref:
    node = Node()
    pacer.beat(MIN_WAIT_S, now_s=now_s)  # it survives a beat alive: frozen
    assert not any(o is node for o in gc.get_objects())
    ref = weakref.ref(node)
    del node  # and is garbage now, which only a walk of the frozen finds
    return ref


def test_what_survives_a_beat_is_frozen_and_walked_no_more(collector_off, short_pauses):
    node = Node()
    frozen = gc.get_freeze_count()
    CollectorPacer().beat(MIN_WAIT_S)
    assert not any(o is node for o in gc.get_objects())  # in no generation a collection walks
    assert gc.get_freeze_count() > frozen
    ref = weakref.ref(Node())  # what comes after is walked by the next beat
    CollectorPacer().beat(MIN_WAIT_S)
    assert ref() is None


def test_every_collection_is_told_with_its_generation_and_pause(collector_off, short_pauses, monkeypatch):
    seen: list[tuple[int, float]] = []
    monkeypatch.setattr(gc_pacing, "GROWTH_CHECK_EVERY", 1)
    pacer = CollectorPacer(observe=lambda generation, pause: seen.append((generation, pause)))
    pacer.beat(MIN_WAIT_S)
    _as_if_the_memory_doubled(pacer)
    pacer.beat(MIN_WAIT_S)
    assert [generation for generation, _ in seen] == [1, 2]
    assert all(pause > 0 for _, pause in seen)


def test_garbage_among_the_frozen_waits_for_a_full_collection_until_the_memory_doubled(
        collector_off, short_pauses, monkeypatch):
    monkeypatch.setattr(gc_pacing, "GROWTH_CHECK_EVERY", 1)
    pacer = _started_pacer()
    ref = _garbage_among_the_frozen(pacer)
    pacer._blocks_after_full = int(sys.getallocatedblocks() / 1.9)  # grown, but not doubled
    pacer.beat(MIN_WAIT_S)
    assert ref() is not None and pacer.full_collections == 0
    _as_if_the_memory_doubled(pacer)
    pacer.beat(MIN_WAIT_S)
    assert ref() is None and pacer.full_collections == 1
    pacer.beat(MIN_WAIT_S)  # what is in use now is the new measure
    assert pacer.full_collections == 1
    assert gc.get_freeze_count() > 0  # what survived the full collection is frozen again


def test_a_full_collection_that_would_pause_long_waits_ten_minutes_after_the_last(collector_off, short_pauses,
                                                                                   monkeypatch):
    """Over 2,000 rooms a full walk stopped every room for up to 1.4 s; while a crowd arrives
    and deals its first rounds the memory doubles with live objects, not garbage."""
    monkeypatch.setattr(gc_pacing, "GROWTH_CHECK_EVERY", 1)
    pacer = _started_pacer(now_s=1000.0)
    ref = _garbage_among_the_frozen(pacer, now_s=1000.0)
    pacer._seconds_per_block = 1.0  # as the last full collection measured: far past the pause allowed
    _as_if_the_memory_doubled(pacer)
    pacer.beat(MIN_WAIT_S, now_s=1000.0 + FULL_AT_MOST_EVERY_S - 1)
    assert ref() is not None and pacer.full_collections == 0
    _as_if_the_memory_doubled(pacer)
    pacer.beat(MIN_WAIT_S, now_s=1000.0 + FULL_AT_MOST_EVERY_S)
    assert ref() is None and pacer.full_collections == 1
    assert 0 < pacer._seconds_per_block < 1.0  # measured again on that collection


def test_a_process_whose_memory_cannot_be_counted_collects_in_full_every_ten_minutes(collector_off,
                                                                                     short_pauses,
                                                                                     monkeypatch):
    monkeypatch.setattr(gc_pacing.sys, "getallocatedblocks", lambda: 0)  # as PYTHONMALLOC=malloc reads
    pacer = _started_pacer(now_s=1000.0)
    ref = _garbage_among_the_frozen(pacer, now_s=1000.0)
    pacer.beat(MIN_WAIT_S, now_s=1000.0 + FULL_AT_LEAST_EVERY_S - 1)
    assert ref() is not None and pacer.full_collections == 0
    pacer.beat(MIN_WAIT_S, now_s=1000.0 + FULL_AT_LEAST_EVERY_S)
    assert ref() is None and pacer.full_collections == 1


def test_the_pace_backs_off_while_collections_are_short_and_quickens_when_one_is_long(collector_off,
                                                                                      short_pauses,
                                                                                      monkeypatch):
    pacer = CollectorPacer()
    waits = [MIN_WAIT_S]
    for _ in range(10):
        waits.append(pacer.beat(waits[-1]))
    # an idle process: each collection is short, so the wait doubles, up to its ceiling
    assert waits[1] == 2 * MIN_WAIT_S and waits[-1] == MAX_WAIT_S
    _long_pauses(monkeypatch)
    assert pacer.beat(MAX_WAIT_S) == MIN_WAIT_S


def test_a_process_gone_idle_after_busy_time_collects_in_full_once(collector_off, short_pauses, monkeypatch):
    pacer = CollectorPacer()
    ref = _garbage_in_old_generation()
    assert pacer.beat(MAX_WAIT_S) == MAX_WAIT_S  # idle, and never busy: nothing to tidy
    assert ref() is not None and pacer.full_collections == 0
    _long_pauses(monkeypatch)
    assert pacer.beat(MIN_WAIT_S) == MIN_WAIT_S  # busy
    _short_pauses(monkeypatch)
    pacer.beat(MAX_WAIT_S)  # idle again
    assert ref() is None and pacer.full_collections == 1
    ref = _garbage_in_old_generation()
    pacer.beat(MAX_WAIT_S)  # still idle: once is enough
    assert ref() is not None and pacer.full_collections == 1


def test_light_steady_play_that_reaches_the_ceiling_is_not_taken_for_idle(collector_off, monkeypatch):
    """A second's garbage that makes a long collection at the ceiling is play, not idleness:
    no full collection (at light steady load the pace climbs to the ceiling and drops back)."""
    pacer = CollectorPacer()
    ref = _garbage_in_old_generation()
    _long_pauses(monkeypatch)
    pacer.beat(MIN_WAIT_S)  # busy
    assert pacer.beat(MAX_WAIT_S) == MIN_WAIT_S
    assert ref() is not None and pacer.full_collections == 0


def test_the_load_generator_waits_past_the_idle_collection(collector_off, short_pauses, monkeypatch):
    """``idle_collection_within_s`` is the time the beats really take, from the last busy one to
    the idle full collection, and the load generator's settling time is longer."""
    from bench.loadgen import IDLE_SETTLE_S

    pacer = CollectorPacer()
    _long_pauses(monkeypatch)
    wait = pacer.beat(MIN_WAIT_S)
    _short_pauses(monkeypatch)
    waited = 0.0
    while pacer.full_collections == 0:
        assert waited < 10
        waited += wait
        wait = pacer.beat(wait)
    assert waited == pytest.approx(idle_collection_within_s())
    assert idle_collection_within_s() < IDLE_SETTLE_S


async def _until(condition, timeout_s: float = 10.0) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(MIN_WAIT_S)

    await asyncio.wait_for(poll(), timeout_s)


async def test_automatic_collection_is_off_while_the_pacer_runs_and_on_after():
    assert gc.isenabled()
    async with paced_collector(True) as pacer:
        assert isinstance(pacer, CollectorPacer) and not gc.isenabled()
        await _until(lambda: pacer.beats >= 1)
    assert gc.isenabled()
    async with paced_collector(False) as pacer:
        assert pacer is None and gc.isenabled()


async def test_a_stopped_pacer_leaves_nothing_frozen():
    """What the beats froze is the stopping app's: its cycles must be garbage a collection
    can find (the tests start and stop hundreds of apps in one process)."""
    async with paced_collector(True) as pacer:
        await _until(lambda: pacer.beats >= 1 and gc.get_freeze_count() > 0)
    assert gc.get_freeze_count() == 0


async def test_two_pacers_in_one_process_leave_the_collector_off_until_both_stop():
    async with paced_collector(True) as first:
        async with paced_collector(True) as second:
            await _until(lambda: first.beats and second.beats)
        assert not gc.isenabled()
    assert gc.isenabled()


async def test_the_collector_is_left_as_found_even_when_the_body_fails(collector_off):
    with pytest.raises(RuntimeError):
        async with paced_collector(True):
            raise RuntimeError("the app failed")
    assert not gc.isenabled()  # (it was off before: the fixture's)
    gc.enable()
    with pytest.raises(RuntimeError):
        async with paced_collector(True):
            raise RuntimeError("the app failed")
    assert gc.isenabled() and gc_pacing._running == 0


async def test_a_failing_beat_is_logged_and_the_beats_go_on(monkeypatch, caplog):
    monkeypatch.setattr(gc_pacing, "MAX_WAIT_S", MIN_WAIT_S)
    calls: list[float] = []

    def beat(self, wait_s: float) -> float:
        calls.append(wait_s)
        if len(calls) == 1:
            raise MemoryError("no room for the collection")
        return MIN_WAIT_S

    monkeypatch.setattr(CollectorPacer, "beat", beat)
    with caplog.at_level("ERROR", logger="mercyless.gc"):
        async with paced_collector(True):
            await _until(lambda: len(calls) >= 3)
    assert any("garbage collection failed" in r.getMessage() for r in caplog.records)
    assert gc.isenabled()


async def test_each_beat_tells_how_late_the_loop_woke_it(monkeypatch):
    """A callback that holds the loop 60 ms past the pacer's 20 ms wait makes that beat at
    least 40 ms late; the beats before and after it are told too."""
    monkeypatch.setattr(CollectorPacer, "beat", lambda self, wait_s: MIN_WAIT_S)
    late: list[float] = []
    async with paced_collector(True, late=late.append):
        await _until(lambda: len(late) >= 1)
        time.sleep(0.060)  # (the stimulus: a callback that does not yield)
        held_at = len(late)
        await _until(lambda: len(late) >= held_at + 2)
    assert late[held_at] >= 0.040
    assert all(x >= 0 for x in late)


async def test_the_app_paces_the_collector_unless_told_not_to(tmp_path):
    from app.core.settings import Settings
    from app.main import create_app

    for paced in (True, False):
        app = create_app(Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/{paced}.sqlite3",
                                  gc_paced=paced, key_prefix=f"gc{paced}", embedded_store=""))
        async with app.router.lifespan_context(app):
            assert (app.state.gc_pacer is not None) is paced
            assert gc.isenabled() is not paced
            if paced:  # its collections are in /metrics
                await _until(lambda pacer=app.state.gc_pacer: pacer.beats >= 1)
                body, _ = app.state.hub.metrics.render()
                assert b'mercyless_gc_pause_seconds_count{generation="1"}' in body
                assert b"mercyless_loop_late_seconds_count" in body
        assert gc.isenabled()
