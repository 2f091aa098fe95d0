"""The collector paced by the event loop (app/gc_pacing.py)."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from app import gc_pacing
from app.gc_pacing import MAX_WAIT_S, MIN_WAIT_S, CollectorPacer, paced_collector


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
    if was:
        gc.enable()


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


def test_old_garbage_waits_for_a_full_collection_until_memory_grew_a_quarter(collector_off):
    pacer = CollectorPacer()
    ref = _garbage_in_old_generation()
    pacer.beat(MIN_WAIT_S)
    assert ref() is not None and pacer.full == 0
    pacer._blocks_after_full = int(pacer._blocks_after_full / 1.3)  # as if a quarter more were in use now
    pacer.beat(MIN_WAIT_S)
    assert ref() is None and pacer.full == 1
    pacer.beat(MIN_WAIT_S)  # what is in use now is the new measure
    assert pacer.full == 1


def test_the_pace_backs_off_while_collections_are_short_and_quickens_when_one_is_long(collector_off,
                                                                                      monkeypatch):
    pacer = CollectorPacer()
    waits = [MIN_WAIT_S]
    for _ in range(10):
        waits.append(pacer.beat(waits[-1]))
    # an idle process: each collection is short, so the wait doubles, up to its ceiling
    assert waits[1] == 2 * MIN_WAIT_S and waits[-1] == MAX_WAIT_S
    monkeypatch.setattr(gc_pacing, "PAUSE_TARGET_S", 0.0)  # every collection now counts as long
    assert pacer.beat(MAX_WAIT_S) == MIN_WAIT_S
    assert pacer.longest_pause_s > 0


def test_a_process_gone_idle_after_busy_time_collects_in_full_once(collector_off, monkeypatch):
    pacer = CollectorPacer()
    ref = _garbage_in_old_generation()
    assert pacer.beat(MAX_WAIT_S) == MAX_WAIT_S  # idle, and never busy: nothing to tidy
    assert ref() is not None and pacer.full == 0
    monkeypatch.setattr(gc_pacing, "PAUSE_TARGET_S", 0.0)
    assert pacer.beat(MIN_WAIT_S) == MIN_WAIT_S  # busy
    monkeypatch.setattr(gc_pacing, "PAUSE_TARGET_S", 1.0)
    pacer.beat(MAX_WAIT_S)  # idle again
    assert ref() is None and pacer.full == 1
    ref = _garbage_in_old_generation()
    pacer.beat(MAX_WAIT_S)  # still idle: once is enough
    assert ref() is not None and pacer.full == 1


async def test_automatic_collection_is_off_while_the_pacer_runs_and_on_after():
    assert gc.isenabled()
    async with paced_collector(True) as pacer:
        assert isinstance(pacer, CollectorPacer)
        for _ in range(200):
            if pacer.beats:
                break
            await asyncio.sleep(MIN_WAIT_S)
        assert pacer.beats >= 1 and not gc.isenabled()
    assert gc.isenabled()
    async with paced_collector(False) as pacer:
        assert pacer is None and gc.isenabled()


async def test_two_pacers_in_one_process_leave_the_collector_off_until_both_stop():
    async with paced_collector(True) as first:
        async with paced_collector(True) as second:
            while not (first.beats and second.beats):
                await asyncio.sleep(MIN_WAIT_S)
        assert not gc.isenabled()
    assert gc.isenabled()


async def test_the_app_paces_the_collector_unless_told_not_to(tmp_path):
    from app.main import create_app
    from app.settings import Settings

    for paced in (True, False):
        app = create_app(Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/{paced}.sqlite3",
                                  gc_paced=paced, key_prefix=f"gc{paced}"))
        async with app.router.lifespan_context(app):
            assert (app.state.gc_pacer is not None) is paced
            assert gc.isenabled() is not paced
        assert gc.isenabled()
