"""A damaged store is never silent and never destroyed: the default server refuses to start,
says what is wrong and how to repair it, and leaves every file as it was; ``mercyless repair``
keeps a copy and cuts a damaged tail away. Black-box: real server processes and the command."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from app.storage.embedded import AOF_DIR

from .harness import ROOT, ServerProcess
from .test_embedded import restarted


def _files(folder: Path) -> dict[str, str]:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(folder.iterdir())}


def _part(folder: Path, kind: str) -> Path:
    manifest = next((folder / AOF_DIR).glob("*.manifest")).read_text().split("\n")
    name = next(line.split()[1] for line in manifest if line.endswith(f"type {kind}"))
    return folder / AOF_DIR / name


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[Path, str, str]:
    """A store with a room in it: its snapshot (base) holds the room, the commands since (incr)
    hold more; stopped cleanly. Each test corrupts a copy."""
    folder = tmp_path_factory.mktemp("damage") / "store"
    server = ServerProcess(embedded_store=str(folder)).start()
    code = server.create("Ann")["code"]
    server.stop()
    server = restarted(server)  # the start rewrites the last life's commands as the snapshot
    store = redis.Redis(unix_socket_path=str(folder / "valkey.sock"))
    deadline = time.monotonic() + 20
    while (info := store.info("persistence"))["aof_rewrites"] < 1 or info["aof_rewrite_in_progress"]:
        assert time.monotonic() < deadline, info
        time.sleep(0.05)
    store.close()
    server.join(code, "Bob")  # into the commands since the snapshot
    server.stop()
    assert _part(folder, "i").stat().st_size > 100 and _part(folder, "b").suffix == ".rdb"
    return folder, code, server.prefix


def _copy(stored: tuple[Path, str, str], tmp_path: Path) -> Path:
    folder = tmp_path / "store"
    shutil.copytree(stored[0], folder, ignore=shutil.ignore_patterns("*.sock"))
    return folder


def _flip(path: Path, at: Callable[[bytes], int]) -> None:
    data = bytearray(path.read_bytes())
    where = at(bytes(data))
    data[where] ^= 0x5A
    path.write_bytes(bytes(data))


def _flip_snapshot(folder: Path) -> None:
    _flip(_part(folder, "b"), lambda data: len(data) // 2)


def _flip_framing(folder: Path) -> None:  # a bulk string's length: "$5" read as "$o"
    _flip(_part(folder, "i"), lambda data: data.index(b"\r\n$", len(data) // 2) + 3)


def _cut_tail(folder: Path) -> None:
    part = _part(folder, "i")
    part.write_bytes(part.read_bytes()[:-9])


def _foreign_file(folder: Path) -> None:
    _part(folder, "i").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)


def _foreign_manifest(folder: Path) -> None:
    next((folder / AOF_DIR).glob("*.manifest")).write_text("[settings]\ntheme = dark\n")


def _start(folder: Path) -> tuple[int, str]:
    server = ServerProcess(embedded_store=str(folder)).launch()
    assert server.proc is not None
    returncode = server.proc.wait(30)
    return returncode, server.stop()


@pytest.mark.parametrize("damage",
                         [_flip_snapshot, _flip_framing, _cut_tail, _foreign_file, _foreign_manifest],
                         ids=["flipped-byte-snapshot", "flipped-byte-framing", "cut-tail", "foreign-file",
                              "foreign-manifest"])
def test_a_damaged_store_refuses_to_start_says_how_to_repair_and_changes_nothing(stored, tmp_path, damage):
    folder = _copy(stored, tmp_path)
    damage(folder)
    before = _files(folder / AOF_DIR)
    returncode, err = _start(folder)
    assert returncode == 2, err[-2000:]
    assert "Mercyless cannot start: The room store's data" in err and "is damaged" in err, err[-2000:]
    assert f"mercyless repair --store {folder}" in err and "Traceback" not in err
    assert _files(folder / AOF_DIR) == before  # nothing written, nothing cut
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(AOF_DIR)) == [AOF_DIR]


def _repair(folder: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", "repair", "--store", str(folder), *more], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def test_repair_keeps_a_copy_cuts_the_damaged_tail_and_the_server_starts_with_the_room(stored, tmp_path):
    folder, (_, code, prefix) = _copy(stored, tmp_path), stored
    _cut_tail(folder)
    damaged = _files(folder / AOF_DIR)
    done = _repair(folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Repaired" in done.stdout
    kept = [p for p in folder.iterdir() if p.name.startswith(f"{AOF_DIR}.damaged-")]
    assert len(kept) == 1 and _files(kept[0]) == damaged  # the files as they were
    server = ServerProcess(embedded_store=str(folder), prefix=prefix).start()
    try:
        room = server.join(code, "Cat")  # the room of the snapshot is there
        assert room["code"] == code
    finally:
        server.stop()
    assert _repair(folder).stdout.startswith(f"The room store in {folder} is whole")


def test_a_damaged_snapshot_cannot_be_cut_back_and_discard_sets_it_all_aside(stored, tmp_path):
    folder = _copy(stored, tmp_path)
    _flip_snapshot(folder)
    damaged = _files(folder / AOF_DIR)
    done = _repair(folder)
    assert done.returncode == 1 and "cannot be cut back" in done.stdout, done.stdout
    assert f"mercyless repair --discard --store {folder}" in done.stdout
    assert _files(folder / AOF_DIR) == damaged  # left as it was
    done = _repair(folder, "--discard")
    assert done.returncode == 0, done.stdout
    kept = sorted(p.name for p in folder.iterdir() if p.name.startswith(f"{AOF_DIR}.damaged-"))
    assert kept, done.stdout
    server = ServerProcess(embedded_store=str(folder)).start()  # an empty store
    server.stop()


def test_repair_refuses_while_a_server_runs_on_the_folder(stored, tmp_path):
    folder = _copy(stored, tmp_path)
    server = ServerProcess(embedded_store=str(folder)).start()
    try:
        done = _repair(folder)
        assert done.returncode == 2 and f"(pid {server.proc.pid})" in done.stdout, done.stdout
    finally:
        server.stop()
