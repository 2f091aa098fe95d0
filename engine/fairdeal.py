"""The fair deal (protocol.md "Fair deal"): every round is dealt from a seed drawn at random;
its hash is shown at the deal and the seed itself once the round is over, so anyone can check
the hash and deal the round again from the seed: the same first top card, the same hands."""

from __future__ import annotations

import functools
import hashlib


@functools.lru_cache(maxsize=1024)  # every view of a round names it: one hash a round
def deal_commitment(seed: str) -> str:
    """The lowercase hex SHA-256 of the seed's UTF-8 bytes."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def verify_commitment(seed: str, commitment: str) -> bool:
    """``seed`` is the one ``commitment`` was made for."""
    return deal_commitment(seed) == commitment.lower()
