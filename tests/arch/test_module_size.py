"""No module of the server, the engine or the client is past ~400 lines (#46): a file that long
does more than one job. The client's string tables (web/js/i18n/) are data, one line a phrase,
and grow with every phrase; they are left out by name."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 400
SOURCES = ("app/*.py", "engine/*.py", "web/*.js", "web/*.css", "web/*.html")
#: data, not code: a phrase a line in each language
TABLES = ("web/js/i18n/",)


def test_no_module_is_past_four_hundred_lines():
    tracked = subprocess.run(["git", "ls-files", *SOURCES], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert len(tracked) > 100, tracked  # (the listing found the tree)
    long = {}
    for name in tracked:
        if name.startswith(TABLES):
            continue
        lines = (ROOT / name).read_text(encoding="utf-8").count("\n")
        if lines > LIMIT:
            long[name] = lines
    assert not long, f"past {LIMIT} lines: {long}"
