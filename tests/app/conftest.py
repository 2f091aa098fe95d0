from __future__ import annotations

import json

import fakeredis
import pytest

from .harness import RedisServer, ServerProcess, real_async_client, real_redis_available

BACKENDS = ["fake", "real"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Each phase's report kept on the test (``item.rep_call``): a fixture that holds servers'
    logs shows them when the test failed."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


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


@pytest.fixture
async def redis_client(backend: str):
    """An asyncio client of fakeredis or of the real Redis, as ``backend`` says (in process)."""
    if backend == "real":
        if not real_redis_available():
            pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
        client = real_async_client()
    else:
        client = fakeredis.FakeAsyncRedis()
    yield client
    await client.aclose()


@pytest.fixture
def own_redis(tmp_path):
    """A redis-server of the test's own (AOF on), which the test may stop and start again."""
    store = RedisServer(tmp_path).start()
    yield store
    store.stop()


@pytest.fixture(scope="module")
def module_servers():
    """Servers shared by a module's tests (a process costs ~2 s to start), one per backend and
    settings; stopped, and their logs checked, when the module is done."""
    started: dict[tuple[str, str], ServerProcess] = {}
    yield started
    errors = [proc.stop() for proc in started.values()]
    for err in errors:
        assert "Traceback" not in err, err[-3000:]


def module_server(backend: str, request: pytest.FixtureRequest,
                  servers: dict[tuple[str, str], ServerProcess]) -> ServerProcess:
    if backend == "real" and not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    marker = request.node.get_closest_marker("settings")
    settings = marker.kwargs if marker else {}
    key = (backend, json.dumps(settings, sort_keys=True))
    proc = servers.get(key)
    if proc is None or proc.proc is None or proc.proc.poll() is not None:
        proc = servers[key] = ServerProcess(redis=backend, **settings).start()
    return proc


@pytest.fixture
def edge_server():
    """Server processes of a test's own, started with the settings it asks for, and stopped
    (their logs checked) when it is done."""
    servers: list[ServerProcess] = []

    def start(**settings) -> ServerProcess:
        proc = ServerProcess(redis="fake", **settings).start()
        servers.append(proc)
        return proc

    yield start
    errors = [proc.stop() for proc in servers]
    for err in errors:
        assert "Traceback" not in err, err[-3000:]
