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


def _block(seed: bytes, index: int) -> tuple[int, ...]:
    return _WORDS.unpack(hashlib.sha256(seed + index.to_bytes(8, "big")).digest())


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
        limit = _MASK32 - (_MASK32 % n)
        while True:
            w = self.word()
            if w < limit:
                return w % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates, in place, with :meth:`below`'s rejection sampling; the words are read
        straight from the blocks (a deal shuffles every card: no method call per word). The
        sequence is exactly what ``word`` would give."""
        seed = self.seed
        index, offset = divmod(self.counter, _WORDS_PER_BLOCK)
        block = self._cache if index == self._cache_index else _block(seed, index)
        for i in range(len(items) - 1, 0, -1):
            n = i + 1
            limit = _MASK32 - (_MASK32 % n)
            while True:
                if offset == _WORDS_PER_BLOCK:
                    index += 1
                    offset = 0
                    block = _block(seed, index)
                w = block[offset]
                offset += 1
                if w < limit:
                    break
            j = w % n
            items[i], items[j] = items[j], items[i]
        self.counter = index * _WORDS_PER_BLOCK + offset
        self._cache, self._cache_index = block, index
