from __future__ import annotations

import pytest

from .harness import ServerProcess, real_redis_available

BACKENDS = ["fake", "real"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS)


@pytest.fixture
def server(backend: str, request: pytest.FixtureRequest):
    if backend == "real" and not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    marker = request.node.get_closest_marker("settings")
    settings = marker.kwargs if marker else {}
    proc = ServerProcess(redis=backend, **settings).start()
    yield proc
    err = proc.stop()
    assert "Traceback" not in err, err[-3000:]
