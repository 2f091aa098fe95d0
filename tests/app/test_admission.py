"""The bounded queue in front of new sockets' pre-welcome work (app/transport/admission.py)."""

from __future__ import annotations

import asyncio

import pytest

from app.transport.admission import (
    RETRY_MAX_MS,
    RETRY_MIN_MS,
    Admission,
    Busy,
    restart_spread_ms,
    spread_reason,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_at_most_so_many_at_once_in_arrival_order_and_a_full_queue_says_busy():
    admission = Admission(2, 3)
    inside: list[int] = []
    order: list[int] = []
    most = 0
    release = asyncio.Event()

    async def socket(i: int) -> None:
        nonlocal most
        async with admission.turn():
            order.append(i)
            inside.append(i)
            most = max(most, len(inside))
            await release.wait()
            inside.remove(i)

    tasks = [asyncio.create_task(socket(i)) for i in range(5)]
    while admission.waiting < 3:
        await asyncio.sleep(0)
    assert order == [0, 1] and admission.waiting == 3
    with pytest.raises(Busy) as busy:
        async with admission.turn():
            raise AssertionError("a sixth socket must not get a turn")
    assert RETRY_MIN_MS <= busy.value.retry_ms <= RETRY_MAX_MS
    assert busy.value.reason() == f'{{"retry_ms":{busy.value.retry_ms}}}' and len(busy.value.reason()) <= 123
    assert admission.refused == 1
    release.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert order == [0, 1, 2, 3, 4] and most == 2 and admission.waiting == 0


async def test_a_turn_left_by_an_error_or_a_cancel_is_given_back():
    admission = Admission(1, 10)
    with pytest.raises(RuntimeError):
        async with admission.turn():
            raise RuntimeError("the hello's commit failed")
    holder = asyncio.Event()

    async def hold() -> None:
        async with admission.turn():
            holder.set()
            await asyncio.Event().wait()

    held = asyncio.create_task(hold())
    await holder.wait()
    waiter = asyncio.create_task(hold())
    while admission.waiting < 1:
        await asyncio.sleep(0)
    waiter.cancel()  # a socket that closed while it waited
    await asyncio.gather(waiter, return_exceptions=True)
    assert admission.waiting == 0
    held.cancel()
    await asyncio.gather(held, return_exceptions=True)
    async with asyncio.timeout(5):
        async with admission.turn():
            pass


async def test_the_hint_is_the_time_the_queue_takes_at_the_pace_of_the_last_turns():
    clock = Clock()
    admission = Admission(1, 1000, clock=clock)
    for _ in range(11):  # eleven turns 0.1 s apart: ten a second
        async with admission.turn():
            pass
        clock.now += 0.1
    admission.waiting = 50
    assert admission.retry_ms() == 5_000
    admission.waiting = 5
    assert admission.retry_ms() == RETRY_MIN_MS
    admission.waiting = 900
    assert admission.retry_ms() == RETRY_MAX_MS


async def test_no_bound_when_set_to_zero():
    admission = Admission(0, 0)
    entered = 0

    async def socket() -> None:
        nonlocal entered
        async with admission.turn():
            entered += 1
            await asyncio.sleep(0)

    await asyncio.gather(*(socket() for _ in range(500)))
    assert entered == 500 and admission.refused == 0


async def test_sockets_told_to_retry_count_in_the_next_hint_until_they_are_due_back():
    clock = Clock()
    admission = Admission(1, 2, clock=clock)
    for _ in range(11):  # ten turns a second
        async with admission.turn():
            pass
        clock.now += 0.1
    admission.waiting = 2  # the queue is full
    hints = []
    for _ in range(40):
        with pytest.raises(Busy) as busy:
            async with admission.turn():
                pass
        hints.append(busy.value.retry_ms)
    # each refused socket is one more coming back: the fortieth is told to spread over 4.2 s
    assert hints[0] == RETRY_MIN_MS and hints[-1] == 4_200 and hints == sorted(hints)
    clock.now += RETRY_MAX_MS / 1000 + 1  # past the longest hint: they are back, or gone
    with pytest.raises(Busy) as busy:
        async with admission.turn():
            pass
    assert busy.value.retry_ms == RETRY_MIN_MS


def test_a_stopping_process_spreads_its_phones_over_the_time_it_takes_to_welcome_them():
    assert restart_spread_ms(10_000, 500) == 20_000
    assert restart_spread_ms(12, 500) == RETRY_MIN_MS
    assert restart_spread_ms(10**6, 500) == RETRY_MAX_MS
    assert spread_reason(20_000) == '{"retry_ms":20000}'
