"""``mercyless repair``: the embedded store's damaged append-only file, checked and cut back to
its last whole command by Valkey's own checker, after a copy of it is kept beside it.

The file is a manifest listing a base (a snapshot with a checksum, or commands) and the
commands written since (``incr``). The checker can cut back only the last file: damage there
(a tail cut by a power loss, a flipped byte in its framing) loses what came after it. Damage in
the base, in an earlier file or in the manifest cannot be cut away; ``--discard`` then sets the
whole folder aside and the server starts with an empty store (rooms in play are lost; finished
rounds are in the database). Nothing is ever deleted: every step keeps the damaged files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.storage.embedded import AOF_DIR, StoreRefused, lock_folder, valkey_binary

Say = Callable[[str], None]


@dataclass(frozen=True)
class Part:
    """One file the manifest lists, and what the checker said of it."""

    name: str
    kind: str  # "b" base, "h" history (being rewritten away), "i" commands since the base
    whole: bool
    said: str


class ManifestDamaged(Exception):
    pass


def read_manifest(folder: Path) -> list[tuple[str, str]]:
    """The (file name, kind) pairs of ``folder``'s manifest, in order; ManifestDamaged if it is
    missing, not a manifest, or names a file outside the folder or not there."""
    manifests = sorted(folder.glob("*.manifest"))
    if len(manifests) != 1:
        raise ManifestDamaged(f"expected one manifest in {folder}, found {len(manifests)}")
    parts = []
    for number, line in enumerate(manifests[0].read_bytes().decode(errors="replace").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        words = line.split()
        fields = dict(zip(words[::2], words[1::2], strict=False))
        name, kind = fields.get("file", ""), fields.get("type", "")
        if not name or kind not in ("b", "h", "i") or "/" in name or not (folder / name).is_file():
            raise ManifestDamaged(f"line {number} of {manifests[0].name} is not a manifest line: "
                                  f"{line[:80]!r}")
        parts.append((name, kind))
    if not parts:
        raise ManifestDamaged(f"{manifests[0].name} lists no file")
    return parts


def _tool(name: str, *args: str, answer: bytes = b"") -> tuple[bool, str]:
    """Run Valkey's checker ``name`` (the server's binary answers to that name); (passed, its output)."""
    done = subprocess.run([name, *args], executable=str(valkey_binary()), input=answer,
                          capture_output=True, timeout=600, check=False)
    return done.returncode == 0, (done.stdout + done.stderr).decode(errors="replace").strip()


def check_file(path: Path) -> tuple[bool, str]:
    if path.suffix == ".rdb":
        return _tool("valkey-check-rdb", str(path))
    return _tool("valkey-check-aof", str(path))


def diagnose(aof: Path) -> list[Part]:
    """Every part of the append-only file in ``aof``, checked (raises ManifestDamaged)."""
    found = []
    for name, kind in read_manifest(aof):
        whole, said = check_file(aof / name)
        found.append(Part(name, kind, whole, said))
    return found


def repair(folder: Path, discard: bool = False, say: Say = print) -> int:
    """Repair the store in ``folder``; the exit status (0: the store will start)."""
    aof = folder / AOF_DIR
    if not aof.is_dir():
        say(f"No room store in {folder}: nothing to repair.")
        return 0
    try:
        lock = lock_folder(folder)
    except StoreRefused as refused:
        say(str(refused))
        return 2
    try:
        kept = _aside(folder)
        if discard:
            os.replace(aof, kept)
            say(f"Set aside: {kept}. The server will start with an empty room store.")
            return 0
        try:
            parts = diagnose(aof)
        except ManifestDamaged as damaged:
            say(f"The room store's manifest is damaged ({damaged}); it cannot be cut back.\n"
                f"{_discard_hint(folder)}")
            return 1
        broken = [part for part in parts if not part.whole]
        if not broken:
            say(f"The room store in {folder} is whole: nothing to repair.")
            return 0
        first = broken[0]
        if first is not parts[-1] or first.kind != "i":
            say(f"{first.name} is damaged and is not the last file, so it cannot be cut back:\n"
                f"{_last_lines(first.said)}\n{_discard_hint(folder)}")
            return 1
        shutil.copytree(aof, kept)
        say(f"A copy of the files as they were: {kept}")
        fixed, said = _tool("valkey-check-aof", "--fix", str(aof / first.name), answer=b"y\n")
        say(_last_lines(said))
        whole, said = check_file(aof / first.name)
        if not (fixed and whole):
            say(f"Valkey's checker could not repair {first.name}:\n{_last_lines(said)}")
            return 1
        say(f"Repaired: {first.name} is cut back to its last whole command. Start the server again.")
        return 0
    finally:
        os.close(lock)


def _discard_hint(folder: Path) -> str:
    return ("To start over with an empty store (the files kept aside): "
            f"mercyless repair --discard --store {folder}")


def _aside(folder: Path) -> Path:
    """A new name beside the store for its damaged files."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    kept, n = folder / f"{AOF_DIR}.damaged-{stamp}", 1
    while kept.exists():
        n += 1
        kept = folder / f"{AOF_DIR}.damaged-{stamp}-{n}"
    return kept


def _last_lines(text: str, count: int = 4) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines()[-count:])
