"""Room codes, player ids, tokens and names (protocol.md "HTTP")."""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata

#: Room-code alphabet without look-alikes (no 0 O 1 I L): 31 symbols, 6 characters, ~30 bits.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
_CODE_RE = re.compile(f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$")
NAME_MAX = 24


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(raw: object) -> str | None:
    """The canonical (upper-case) code, or ``None`` if ``raw`` cannot be a room code."""
    if not isinstance(raw, str) or len(raw) > 32:
        return None
    code = raw.strip().upper()
    return code if _CODE_RE.match(code) else None


def address_key(code: str, address: str) -> str:
    """A joiner's network address as a room keeps it (to bar a removed player): a short hash,
    salted with the room's code, so no room holds an address nor can two rooms' be matched."""
    return "a:" + hashlib.sha256(f"{code}|{address}".encode()).hexdigest()[:16]


def name_key(name: str) -> str:
    """A name as a room bars it: case and width folded, so "ANN" and "ann" are one name."""
    return "n:" + unicodedata.normalize("NFKC", name).casefold()


def new_player_id(bot: bool = False) -> str:
    return ("b" if bot else "p") + secrets.token_hex(5)


def new_token() -> str:
    """128 bits of randomness, URL-safe. Only its hash is ever stored."""
    return secrets.token_urlsafe(16)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def clean_name(raw: object) -> str | None:
    """1-24 printable characters after trimming, or ``None``."""
    if not isinstance(raw, str):
        return None
    name = " ".join(raw.split())
    if not 1 <= len(name) <= NAME_MAX:
        return None
    for ch in name:
        cat = unicodedata.category(ch)
        if cat.startswith("C") or cat in ("Zl", "Zp"):
            return None
    return name
