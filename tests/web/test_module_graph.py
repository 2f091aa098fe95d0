"""The client's modules import one another without a circle (issue #46.6: landing -> room ->
shell -> room was one; web/js/router.js broke it). Read from the sources, no browser."""

from __future__ import annotations

import re
from pathlib import Path

WEB_JS = Path(__file__).resolve().parents[2] / "web" / "js"
IMPORT = re.compile(r"""^\s*import\s(?:[^'"]*?\sfrom\s)?["'](\.{1,2}/[^"']+)["']""", re.M)


def graph(root: Path) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in root.rglob("*.js"):
        name = path.relative_to(root).as_posix()
        edges[name] = {(path.parent / spec).resolve().relative_to(root.resolve()).as_posix()
                       for spec in IMPORT.findall(path.read_text(encoding="utf-8"))}
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    part.append(top)
                    if top == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def test_the_check_finds_a_circle():
    assert circles({"a.js": {"b.js"}, "b.js": {"c.js"}, "c.js": {"a.js"}, "d.js": {"a.js"}}) == [
        ["a.js", "b.js", "c.js"]]
    assert circles({"a.js": {"b.js"}, "b.js": set()}) == []


def test_the_clients_modules_import_one_another_without_a_circle():
    edges = graph(WEB_JS)
    assert "room.js" in edges["app.js"]  # (the graph is read)
    assert circles(edges) == []
