"""A counter-based random generator whose whole state is ``(seed, counter)``.

CPython promises a stable sequence only for ``random()`` itself, not for ``shuffle`` or
``randrange``, so a recorded game could replay differently on another Python. Here each block of
eight 32-bit words is ``sha256(seed || block_index)``; ``counter`` counts the words used. The
state lives in the game state and round-trips through JSON as two plain values.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import MutableSequence
from typing import TypeVar

T = TypeVar("T")

_WORDS_PER_BLOCK = 8
_MASK32 = 1 << 32


_WORDS = struct.Struct(">8I")
_RUNS: dict[int, struct.Struct] = {}  # blocks -> the Struct that unpacks that many at once
_LIMITS: dict[int, tuple[int, ...]] = {}  # shuffle size -> limit(n) for n = size ... 2


def _block(seed: bytes, index: int) -> tuple[int, ...]:
    return _WORDS.unpack(hashlib.sha256(seed + index.to_bytes(8, "big")).digest())


def _blocks(seed: bytes, first: int, count: int) -> tuple[int, ...]:
    """The words of ``count`` blocks from block ``first`` on, in one unpack."""
    run = _RUNS.get(count)
    if run is None:
        run = struct.Struct(f">{count * _WORDS_PER_BLOCK}I")
        if len(_RUNS) < 512:
            _RUNS[count] = run
    sha256 = hashlib.sha256
    return run.unpack(b"".join([sha256(seed + i.to_bytes(8, "big")).digest()
                                for i in range(first, first + count)]))


def limit(n: int) -> int:
    """Words at or above this are rejected when drawing below ``n`` (no modulo bias)."""
    return _MASK32 - (_MASK32 % n)


def _limits(size: int) -> tuple[int, ...]:
    limits = _LIMITS.get(size)
    if limits is None:
        limits = tuple([limit(n) for n in range(size, 1, -1)])
        if len(_LIMITS) < 4096:
            _LIMITS[size] = limits
    return limits


class Rng:
    """Draws words for one operation, then hands back the new counter.

    Usage: ``rng = Rng(seed, counter)``; ``rng.below(n)``; ``state.rng_counter = rng.counter``.
    """

    __slots__ = ("_cache", "_cache_index", "counter", "seed")

    def __init__(self, seed: str, counter: int) -> None:
        self.seed = seed.encode()
        self.counter = counter
        self._cache_index = -1
        self._cache: tuple[int, ...] = ()

    def word(self) -> int:
        index, offset = divmod(self.counter, _WORDS_PER_BLOCK)
        if index != self._cache_index:
            self._cache = _block(self.seed, index)
            self._cache_index = index
        self.counter += 1
        return self._cache[offset]

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` by rejection sampling (no modulo bias)."""
        if n <= 1:
            return 0
        bound = limit(n)
        while True:
            w = self.word()
            if w < bound:
                return w % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates, in place: swap item ``i`` with item ``below(i + 1)``, ``i`` from the
        last down to 1. A deal shuffles every card, so the words come a run of blocks at a
        time and the loop reads them without a call per word; the sequence is exactly the one
        ``below`` gives."""
        size = len(items)
        if size < 2:
            return
        index, offset = divmod(self.counter, _WORDS_PER_BLOCK)
        need = size - 1
        words = _blocks(self.seed, index, (offset + need + _WORDS_PER_BLOCK - 1) // _WORDS_PER_BLOCK)
        self._cache_index = -1
        i = 0
        for i, w, bound in zip(range(need, 0, -1), words[offset:], _limits(size), strict=False):
            if w >= bound:
                break
            j = w % (i + 1)
            items[i], items[j] = items[j], items[i]
        else:
            self.counter += need
            return
        # a rejected word (for a deck, about once in ten million shuffles): the rest one
        # ``below`` at a time, which rejects that word again and reads on
        self.counter += need - i
        for k in range(i, 0, -1):
            j = self.below(k + 1)
            items[k], items[j] = items[j], items[k]
