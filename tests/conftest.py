"""Checks every test gets for free."""

from __future__ import annotations

import copy
import functools
import os
import tempfile
from pathlib import Path

import httpx._transports.default
import pytest

from engine import view

# httpx makes an SSL context (certifi's CA certificates loaded: ~20 ms of CPU) for every call of
# httpx.get or httpx.post, though the tests speak plain HTTP to 127.0.0.1: thousands of them in
# a run. One context for each set of arguments serves them all (a context is shared safely).
httpx._transports.default.create_ssl_context = functools.lru_cache(maxsize=8)(
    httpx._transports.default.create_ssl_context)

_PRISTINE_HINT = copy.deepcopy(view._NO_HINT)


@pytest.fixture(autouse=True)
def _shared_hint_left_alone():
    """``engine.view._NO_HINT`` is one object in every view of a seat that may do nothing, in
    every room: a test (or the code it runs) that changed it in place would have changed them
    all."""
    yield
    assert view._NO_HINT == _PRISTINE_HINT, "the shared 'may do nothing' hint was changed in place"


# TEST_REDIS_CLUSTER=1: every test of the real Redis runs on a local Redis Cluster (3 primaries,
# 3 replicas) started here, before the harness reads where the real Redis is
_CLUSTER = None
if os.environ.get("TEST_REDIS_CLUSTER") == "1" and not os.environ.get("TEST_REDIS_CLUSTER_URL"):
    from bench.rediscluster import LocalCluster

    _CLUSTER = LocalCluster(Path(tempfile.mkdtemp(prefix="mercyless-test-cluster-"))).start()
    os.environ["TEST_REDIS_CLUSTER_URL"] = _CLUSTER.url


def pytest_unconfigure(config: pytest.Config) -> None:
    if _CLUSTER is not None:
        _CLUSTER.stop()


def _file_seconds() -> dict[str, float]:
    """tests/durations.txt: how long each test file took (scripts/durations.py writes it)."""
    seconds: dict[str, float] = {}
    for line in (Path(__file__).parent / "durations.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            value, path = line.split(" ", 1)
            seconds[path] = float(value)
    return seconds


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest files first, each file's tests together and in their order (a module's
    fixtures are set up once): the parallel run (scripts/test.sh) hands tests out in this
    order, so it ends on short tests instead of a worker waiting alone on a long one. The
    browser's tests stay after all the others: once Playwright's session-wide browser is up,
    its event loop runs in the worker's thread and no asyncio test can start its own."""
    seconds = _file_seconds()

    def order(item: pytest.Item) -> tuple[bool, float]:
        path = item.nodeid.split("::", 1)[0]
        return path.startswith("tests/web/"), -seconds.get(path, 0.0)

    items.sort(key=order)
