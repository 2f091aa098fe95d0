"""The tests' fork server (tests/app/zygote.py): a server forked from its imports is the server
``python -m app serve`` would start, with its own environment, and ends as that one would."""

from __future__ import annotations

import os
import signal

import httpx

from .harness import ServerProcess
from .zygote import ForkedProcess


def test_each_forked_server_has_its_own_settings_and_ends_as_a_process_of_its_own_would():
    lan = ServerProcess(allowed_hosts=["lan.test"]).start()
    plain = ServerProcess().start()
    try:
        assert isinstance(lan.proc, ForkedProcess) and isinstance(plain.proc, ForkedProcess)
        assert lan.proc.pid != plain.proc.pid
        asked = {name: httpx.get(f"{server.url}/api/rules", headers={"host": "lan.test"}).status_code
                 for name, server in (("lan", lan), ("plain", plain))}
        assert asked == {"lan": 200, "plain": 400}
    finally:
        procs = (lan.proc, plain.proc)
        logs = [lan.stop(), plain.stop(signal.SIGKILL)]
    assert [p.returncode for p in procs] == [-signal.SIGTERM, -signal.SIGKILL]
    assert "Traceback" not in logs[0], logs[0][-2000:]
    for p in procs:  # reaped by the zygote: no zombie is left behind
        assert not os.path.exists(f"/proc/{p.pid}")


def test_a_server_that_cannot_start_exits_with_its_status_and_says_why():
    refused = ServerProcess(max_frame_bytes="lots").launch()
    assert refused.proc.wait(30) == 1
    assert "max_frame_bytes" in refused.stop()


def test_a_server_with_its_own_home_is_not_forked():
    """The app reads MERCYLESS_HOME when it is imported (app/core/paths.py): the zygote's
    imports would serve the wrong web/ folder."""
    home = ServerProcess(mercyless_home=os.fspath(os.getcwd()))
    home.launch()
    try:
        assert not isinstance(home.proc, ForkedProcess)
    finally:
        home.stop()
