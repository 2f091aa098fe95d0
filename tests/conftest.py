"""Checks every test gets for free."""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path

import pytest

from engine import view

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


#: tests that take minutes, started first so that the parallel run (scripts/test.sh) does not
#: end waiting on one of them
LONGEST_FIRST = ("tests/app/test_soak.py::",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(LONGEST_FIRST))
