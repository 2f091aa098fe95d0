"""Room codes, player ids, tokens and names (protocol.md "HTTP")."""

from __future__ import annotations

import functools
import hashlib
import re
import secrets
import unicodedata

from confusable_homoglyphs.utils import load as confusables_table

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
    """A name as a room bars it and tells it from a bot's: case, width and accents folded, and
    each letter taken for the one it looks like (Unicode's confusables), so "ANN", "ann",
    "Ánn" and "Аnn" (a Cyrillic A) are one name, and so are "B0b" and "Bob"."""
    folded = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", name).casefold())
    alike = _look_alikes()
    bare = "".join(alike.get(ch, ch) for ch in folded if unicodedata.category(ch) != "Mn")
    return "n:" + unicodedata.normalize("NFKC", bare).casefold()


def read_look_alikes() -> None:
    """Reads the look-alike table now (a 0.9 MB parse, ~40 ms): a server does so as it starts,
    not on its event loop at the first join."""
    _look_alikes()


@functools.cache
def _look_alikes() -> dict[str, str]:
    """Each character Unicode lists as a look-alike, to the one that stands for its kind. The
    table (confusables.txt through confusable-homoglyphs) lists a kind's character with all of
    its look-alikes and each look-alike with that character alone; two characters listed only
    with each other are a kind of two, stood for by the smaller. Read at the first use and let
    go once this map is made: the table loaded is ~16 MB, the map ~1 MB."""
    table = confusables_table("confusables.json")
    alike: dict[str, str] = {}
    for ch, others in table.items():
        if len(others) != 1:
            continue  # a kind's own character (or one the table lists with several kinds)
        other = others[0]["c"]
        if len(table.get(other, ())) > 1 or other < ch:
            alike[ch] = other
    return alike


def new_player_id(bot: bool = False) -> str:
    return ("b" if bot else "p") + secrets.token_hex(5)


def new_token() -> str:
    """128 bits of randomness, URL-safe. Only its hash is ever stored."""
    return secrets.token_urlsafe(16)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


#: Characters Unicode files as letters or symbols that draw nothing: the Hangul fillers and the
#: Braille blank (a name of them alone reads as no name at all in the log and on the seats)
BLANK_LOOKING = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def clean_name(raw: object) -> str | None:
    """1-24 printable characters after trimming, at least one of them visible, or ``None``."""
    if not isinstance(raw, str):
        return None
    name = " ".join(raw.split())
    if not 1 <= len(name) <= NAME_MAX:
        return None
    visible = False
    for ch in name:
        cat = unicodedata.category(ch)
        if cat.startswith("C") or cat in ("Zl", "Zp"):
            return None
        # a mark alone (a combining accent, a variation selector) draws nothing of its own
        visible = visible or (cat[0] in "LNPS" and ch not in BLANK_LOOKING)
    return name if visible else None
