"""How the engine is put together: its speed tricks stay where they are defined, and no import
circle hides behind a late import. Checked on the source with :mod:`ast`."""

from __future__ import annotations

import ast
from enum import Enum
from pathlib import Path

import engine.actions
import engine.cards
import engine.errors
import engine.events
import engine.rules
import engine.state

ENGINE = Path(__file__).resolve().parents[2] / "engine"
SOURCES = {p.relative_to(ENGINE).as_posix(): ast.parse(p.read_text(encoding="utf-8"))
           for p in sorted(ENGINE.rglob("*.py"))}
ENUMS = {name for module in (engine.actions, engine.cards, engine.errors, engine.events, engine.rules,
                             engine.state)
         for name, value in vars(module).items() if isinstance(value, type) and issubclass(value, Enum)}


def _attribute_uses(owner: str, attr: str) -> list[str]:
    return sorted(name for name, tree in SOURCES.items() for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and node.attr == attr
                  and isinstance(node.value, ast.Name) and node.value.id == owner)


def test_tuple_new_and_object_new_are_used_by_the_value_constructors_alone() -> None:
    assert _attribute_uses("tuple", "__new__") == ["_records.py"]
    assert _attribute_uses("object", "__new__") == ["state.py"]


def test_enum_members_are_bound_to_module_names_in_one_module() -> None:
    bound = sorted({name for name, tree in SOURCES.items() for node in tree.body
                    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute)
                    and isinstance(node.value.value, ast.Name) and node.value.value.id in ENUMS})
    assert bound == ["_members.py"]


def test_no_import_inside_a_function_or_class() -> None:
    """A late import is how an import circle hides; the engine's modules import at the top."""
    late = [f"{name}:{inner.lineno}" for name, tree in SOURCES.items() for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            for inner in ast.walk(node) if isinstance(inner, ast.Import | ast.ImportFrom)]
    assert late == []


def test_no_cache_is_keyed_by_object_identity() -> None:
    """An ``id()`` outlives its object; values carry what is derived from them instead."""
    calls = [f"{name}:{node.lineno}" for name, tree in SOURCES.items() for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "id"]
    assert calls == []
