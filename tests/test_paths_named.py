"""Every repository path a comment, a docstring or a document names exists (issue #46.5): a
module that moves leaves no stale "see ..." behind it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP = ("app", "engine", "web", "tests", "bench", "docs", "scripts", "migrations", "deploy", "requirements")
EXTS = ("py", "js", "css", "md", "html", "toml", "sh", "yml", "yaml", "json", "txt", "conf", "svg", "png",
        "webmanifest", "ini")
# a path starts a word (not part of a URL or of ../shared/...) under one of the tree's top folders
NAMED = re.compile(rf"(?<![\w/.-])((?:{'|'.join(TOP)})/[\w./-]*\.(?:{'|'.join(EXTS)}))\b")
READ = (".py", ".js", ".css", ".md", ".html", ".sh", ".toml", ".yml", ".conf", ".ini")


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [f for f in out.split() if f.endswith(READ)]


def named_paths(text: str) -> set[str]:
    return {m.group(1).rstrip(".") for m in NAMED.finditer(text)}


def test_the_pattern_finds_paths_and_only_paths():
    gone = "app/" + "relay.py"  # (written so that this file names no such path itself)
    text = f"see {gone}, web/js/net.js's send; not https://x.org/app/a.py nor ../shared/docs/x.md"
    assert named_paths(text) == {gone, "web/js/net.js"}


def test_every_path_named_in_the_tree_exists():
    missing = {}
    for name in tracked():
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        for path in named_paths(text):
            # web/README.md names the client's files from web/ (js/net.js) and from the root
            if not (ROOT / path).exists() and not (ROOT / "web" / path).exists():
                missing.setdefault(path, []).append(name)
    assert missing == {}, missing
