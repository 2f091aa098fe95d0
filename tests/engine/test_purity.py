"""The engine is pure Python, standard library only (docs/engine.md).

Two independent checks: every ``engine/**/*.py`` parsed with :mod:`ast` (imports anywhere in a
module count, lazy ones inside functions included, and so do ``importlib.import_module`` /
``__import__`` calls with a literal name), and the import-linter contract of ``pyproject.toml``
run through the venv's ``lint-imports``.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"
SOURCES = sorted(ENGINE.rglob("*.py"))
#: besides the standard library, a module of the engine may import the engine itself
ALLOWED_ROOTS = frozenset(sys.stdlib_module_names) | {"engine"}


def imported_modules(source: str, filename: str = "<module>") -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every non-relative import in ``source``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                module = node.args[0].value
                if not module.startswith("."):
                    found.append((node.lineno, module))
    return found


def foreign_imports(source: str, filename: str = "<module>") -> list[str]:
    return [f"{filename}:{line}: {module}" for line, module in imported_modules(source, filename)
            if module.partition(".")[0] not in ALLOWED_ROOTS]


def test_the_checker_sees_every_kind_of_import() -> None:
    source = (
        "from __future__ import annotations\n"
        "import json, os.path\n"
        "from . import cards\n"
        "from .rules import make_rules\n"
        "from collections.abc import Mapping\n"
        "import numpy as np\n"
        "from pydantic import BaseModel\n"
        "def lazy():\n"
        "    import rlcard.games\n"
        "    try:\n"
        "        from orjson import dumps\n"
        "    except ImportError:\n"
        "        pass\n"
        "import importlib\n"
        "importlib.import_module('redis')\n"
        "__import__('fastapi')\n"
        "importlib.import_module('.state', 'engine')\n"
    )
    bad = sorted(entry.split(": ")[1] for entry in foreign_imports(source))
    assert bad == ["fastapi", "numpy", "orjson", "pydantic", "redis", "rlcard.games"]


def test_every_engine_module_is_found() -> None:
    names = {p.relative_to(ENGINE).as_posix() for p in SOURCES}
    assert {"__init__.py", "game.py", "rules.py", "state.py", "view.py", "rng.py"} <= names
    assert len(names) >= 15


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_engine_module_imports_only_the_standard_library(path: Path) -> None:
    bad = foreign_imports(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    assert not bad, "imports outside the standard library:\n" + "\n".join(bad)


def lint_imports_binary() -> str | None:
    venv = Path(sys.executable).parent / "lint-imports"
    if venv.exists():
        return str(venv)
    local = ROOT / ".venv" / "bin" / "lint-imports"
    if local.exists():
        return str(local)
    return shutil.which("lint-imports")


def test_import_linter_contract_is_kept() -> None:
    binary = lint_imports_binary()
    if binary is None:
        pytest.fail("import-linter is not installed (it is in the dev extra: pip install -e '.[dev]')")
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    result = subprocess.run([binary, "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, f"lint-imports failed:\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}"
    assert "BROKEN" not in result.stdout
