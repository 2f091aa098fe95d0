"""The lock files (requirements/, made by scripts/lock.sh) agree with pyproject.toml, and the
installs use them. Offline and fast: the lock files are read as text, and the packages'
own dependencies come from the metadata of what .venv has installed (from the lock)."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCKS = ROOT / "requirements"
RELOCK = "pyproject.toml and the lock disagree: run scripts/lock.sh"
ENTRY = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)((?:\s+--hash=sha256:[0-9a-f]{64})+)")
# what the locks are made for (scripts/lock.sh: --python-version 3.11, --python-platform x86_64-manylinux)
TARGET = {**default_environment(), "python_version": "3.11", "python_full_version": "3.11.0",
          "implementation_name": "cpython", "implementation_version": "3.11.0",
          "platform_python_implementation": "CPython", "os_name": "posix", "sys_platform": "linux",
          "platform_system": "Linux", "platform_machine": "x86_64"}


def read_lock(name: str) -> dict[str, tuple[str, frozenset[str]]]:
    """{canonical name: (version, hashes)} of requirements/NAME; every entry must be pinned with
    sha256 hashes (what pip's --require-hashes needs), and nothing else may be in the file."""
    text = (LOCKS / name).read_text()
    logical = re.sub(r"\\\n", " ", text)
    entries: dict[str, tuple[str, frozenset[str]]] = {}
    for line in logical.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = ENTRY.fullmatch(line)
        assert match, f"requirements/{name}: not a pinned requirement with hashes: {line[:120]!r}"
        key = canonicalize_name(match[1])
        assert key not in entries, f"requirements/{name}: {key} twice"
        entries[key] = (match[2], frozenset(re.findall(r"sha256:([0-9a-f]{64})", match[3])))
    assert entries, f"requirements/{name} locks nothing"
    return entries


@pytest.fixture(scope="module")
def project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


@pytest.fixture(scope="module")
def locks():
    return {name: read_lock(name) for name in ("runtime.txt", "dev.txt", "build.txt")}


def applies(req: Requirement, extras=("",)) -> bool:
    return req.marker is None or any(req.marker.evaluate({**TARGET, "extra": e}) for e in extras)


def assert_locked(req: Requirement, lock: dict, where: str):
    if not applies(req):
        return
    key = canonicalize_name(req.name)
    assert key in lock, f"{req} is not in requirements/{where}: {RELOCK}"
    version = lock[key][0]
    assert req.specifier.contains(version, prereleases=True), \
        f"requirements/{where} pins {key}=={version}, outside {req}: {RELOCK}"


def test_every_lock_pins_with_hashes_for_python_311(locks):
    for name in locks:
        header = (LOCKS / name).read_text().splitlines()[:3]
        assert any("CPython 3.11" in line and "x86_64" in line for line in header), name
        assert any("scripts/lock.sh" in line for line in header), name


def test_pyproject_dependencies_are_locked(project, locks):
    for dep in project["project"]["dependencies"]:
        assert_locked(Requirement(dep), locks["runtime.txt"], "runtime.txt")
        assert_locked(Requirement(dep), locks["dev.txt"], "dev.txt")
    extras = project["project"]["optional-dependencies"]
    assert set(extras) == {"dev", "bench"}, "a new extra: lock it in scripts/lock.sh and setup.sh"
    for deps in extras.values():
        for dep in deps:
            assert_locked(Requirement(dep), locks["dev.txt"], "dev.txt")
    for dep in project["build-system"]["requires"]:
        assert_locked(Requirement(dep), locks["build.txt"], "build.txt")
    assert "pip" in locks["build.txt"]


def test_runtime_lock_has_the_dev_locks_pins(locks):
    """One resolution: the Docker image runs the versions that the tests ran."""
    runtime, dev = locks["runtime.txt"], locks["dev.txt"]
    assert set(runtime) <= set(dev), f"only in runtime.txt: {sorted(set(runtime) - set(dev))}: {RELOCK}"
    for key, (version, hashes) in runtime.items():
        assert dev[key] == (version, hashes), f"{key}: runtime.txt and dev.txt differ: {RELOCK}"
    assert not set(locks["build.txt"]) & set(dev), "pip/setuptools in dev.txt as well as build.txt"


def installed(key: str) -> str | None:
    try:
        return metadata.version(key)
    except metadata.PackageNotFoundError:
        return None


def test_venv_is_the_lock(locks):
    """.venv holds what requirements/dev.txt pins (scripts/setup.sh re-creates it on a change)."""
    wrong = {key: (version, installed(key)) for key, (version, _) in locks["dev.txt"].items()
             if installed(key) != version}
    assert not wrong, f"{{name: (locked, installed)}} {wrong}: run EXTRAS=dev,bench scripts/setup.sh"


def closure(roots: list[Requirement], lock: dict, where: str) -> set[str]:
    """The lock's packages that ROOTS need, following each installed package's own metadata;
    asserts that every requirement met on the way is locked at a version it allows."""
    todo = [req for req in roots if applies(req)]
    seen: set[tuple[str, str]] = set()
    needed: set[str] = set()
    while todo:
        req = todo.pop()
        assert_locked(req, lock, where)
        key = canonicalize_name(req.name)
        needed.add(key)
        for extra in ("", *sorted(req.extras)):
            if (key, extra) not in seen:
                seen.add((key, extra))
                subs = (Requirement(sub) for sub in metadata.requires(key) or [])
                todo.extend(sub for sub in subs if applies(sub, (extra,)))
    return needed


def test_locks_hold_exactly_what_pyproject_needs(project, locks):
    """Every dependency of a dependency is locked too, and the locks hold nothing that
    pyproject.toml no longer asks for (a dependency removed without scripts/lock.sh)."""
    if any(installed(key) != version for key, (version, _) in locks["dev.txt"].items()):
        pytest.skip("needs .venv installed from requirements/dev.txt (see test_venv_is_the_lock)")
    runtime_roots = [Requirement(d) for d in project["project"]["dependencies"]]
    extra_roots = [Requirement(d) for deps in project["project"]["optional-dependencies"].values()
                   for d in deps]
    for where, roots in (("runtime.txt", runtime_roots), ("dev.txt", runtime_roots + extra_roots)):
        needed = closure(roots, locks[where], where)
        assert needed == set(locks[where]), \
            f"requirements/{where}: not needed {sorted(set(locks[where]) - needed)}: {RELOCK}"


def test_installs_go_through_the_lock():
    docker = (ROOT / "Dockerfile").read_text()
    bases = re.findall(r"^FROM\s+(\S+)", docker, re.M)
    assert bases and all(b.startswith("python:3.11-") for b in bases), f"the lock is for 3.11: {bases}"
    final = docker.split("FROM python:3.11-slim\n", 1)[1]
    assert re.search(r"pip install [^\n]*--require-hashes -r \S*requirements\.txt", final)
    assert "COPY requirements/runtime.txt" in final
    assert re.search(r"pip install [^\n]*--no-deps /wheels/", final)
    assert "--require-hashes -r requirements/build.txt" in docker
    assert not re.search(r"^\s*requirements", (ROOT / ".dockerignore").read_text(), re.M)
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    for lock in ("requirements/runtime.txt", "requirements/dev.txt", "requirements/build.txt"):
        assert lock in setup
    assert "--require-hashes" in setup and "--no-deps" in setup
    assert "EXTRAS=dev,bench scripts/setup.sh" in (ROOT / "scripts" / "test.sh").read_text()
