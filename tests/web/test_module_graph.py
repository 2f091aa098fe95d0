"""The client's modules import one another without a circle (issue #46.6: landing -> room ->
shell -> room was one; web/js/router.js broke it). Read from the sources, no browser."""

from __future__ import annotations

import re
from pathlib import Path

from tests.arch.test_import_graph import cycles  # Tarjan's, as the Python modules are checked

WEB_JS = Path(__file__).resolve().parents[2] / "web" / "js"
IMPORT = re.compile(r"""^\s*import\s(?:[^'"]*?\sfrom\s)?["'](\.{1,2}/[^"']+)["']""", re.M)


def graph(root: Path) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in root.rglob("*.js"):
        name = path.relative_to(root).as_posix()
        edges[name] = {(path.parent / spec).resolve().relative_to(root.resolve()).as_posix()
                       for spec in IMPORT.findall(path.read_text(encoding="utf-8"))}
    return edges


def test_the_check_finds_a_circle():
    assert cycles({"a.js": {"b.js"}, "b.js": {"c.js"}, "c.js": {"a.js"}, "d.js": {"a.js"}}) == [
        ["a.js", "b.js", "c.js"]]
    assert cycles({"a.js": {"b.js"}, "b.js": set()}) == []


def test_the_clients_modules_import_one_another_without_a_circle():
    edges = graph(WEB_JS)
    assert "room.js" in edges["app.js"]  # (the graph is read)
    assert cycles(edges) == []
