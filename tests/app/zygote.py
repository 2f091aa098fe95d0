"""A fork server for the tests' server processes: it imports the app once, then forks a server
for each request, so that a test's server starts without paying for the imports again (about a
second of CPU, two of wall time on a busy machine, for each of the suite's ~200 starts).

Run as ``python -m tests.app.zygote``; one per pytest process, started by ``Zygote.shared()`` on
its first use. It reads requests from its stdin, one JSON object a line (``module``, ``args``,
``env``, ``cwd``, ``log``), and writes to its stdout ``{"started": pid}`` for each, then
``{"exited": pid, "code": n}`` when that process ends (``n`` as ``Popen.returncode`` has it,
negative for a signal). A forked server is what ``python -m app serve`` would be: its own
environment, stdin and stdout on /dev/null, stderr to the given file, the interpreter's exit
handlers run at its end. ``TEST_ZYGOTE=0`` starts every server as a fresh interpreter instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import types
from typing import Any

PRELOADED = ("app.cli", "app.main", "bench.serve", "uvicorn", "uvloop", "httptools", "websockets")


def _run_server(request: dict[str, Any]) -> int:
    """In the forked child: become the server the request asks for; its exit status."""
    import atexit
    import traceback

    devnull = os.open(os.devnull, os.O_RDWR)
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(log, 2)
    os.close(devnull)
    os.close(log)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    # a main module with no name or file: a worker spawned by multiprocessing imports nothing of
    # it, as with ``python -m app`` (whose main module, app.__main__, it also leaves alone)
    sys.modules["__main__"] = types.ModuleType("__main__")
    module, args = request["module"], request["args"]
    sys.argv = [module, *args]
    code = 0
    try:
        if module == "app":
            from app.cli import main

            main(args)
        else:
            import bench.serve

            bench.serve.main()
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:  # as the interpreter would: the traceback, then status 1
        traceback.print_exc()
        code = 1
    # what the interpreter does at its end: non-daemon threads joined (the pools' own exit
    # handlers run there), then the exit handlers, then the streams flushed
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return code


def _status(wait_status: int) -> int:
    if os.WIFSIGNALED(wait_status):
        return -os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)


def serve() -> None:
    """The zygote's loop: fork a server for each request, report each one's end."""
    for name in PRELOADED:
        __import__(name)
    out = sys.stdout
    alive: set[int] = set()
    buffered = b""
    stdin = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([stdin], [], [], 0.05)
        for pid in list(alive):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                alive.discard(pid)
                out.write(json.dumps({"exited": pid, "code": _status(status)}) + "\n")
                out.flush()
        if not ready:
            continue
        chunk = os.read(stdin, 65536)
        if not chunk:  # the test process is gone: its servers are stopped by it or by the OS
            return
        buffered += chunk
        while b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            request = json.loads(line)
            out.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    code = _run_server(request)
                finally:
                    os._exit(code)
            alive.add(pid)
            out.write(json.dumps({"started": pid}) + "\n")
            out.flush()


# -- the test process's side -------------------------------------------------------------------

class ForkedProcess:
    """A server forked by the zygote, with the part of ``subprocess.Popen`` the tests use: its
    exit status comes from the zygote, which is its parent."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote = zygote
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.exit_code(self.pid, timeout=0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self.zygote.exit_code(self.pid, timeout=timeout)
            if code is None:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0)
            self.returncode = code
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    """The test process's zygote: started on first use, asked for servers over its stdin."""

    _shared: Zygote | None = None
    _shared_lock = threading.Lock()

    def __init__(self, root: str) -> None:
        env = dict(os.environ, PYTHONPATH=root)
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.app.zygote"], cwd=root, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._asking = threading.Lock()
        self._changed = threading.Condition()
        self._started: list[int] = []
        self._exited: dict[int, int] = {}
        threading.Thread(target=self._read, name="zygote-reader", daemon=True).start()

    @classmethod
    def shared(cls, root: str) -> Zygote | None:
        """This process's zygote (``None`` with ``TEST_ZYGOTE=0``, or once it has died)."""
        if os.environ.get("TEST_ZYGOTE", "1") == "0":
            return None
        with cls._shared_lock:
            if cls._shared is None or cls._shared.proc.poll() is not None:
                cls._shared = cls(root)
            return cls._shared

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            with self._changed:
                if "started" in message:
                    self._started.append(message["started"])
                else:
                    self._exited[message["exited"]] = message["code"]
                self._changed.notify_all()
        with self._changed:  # the zygote is gone: nobody will be told of an end any more
            self._changed.notify_all()

    def start(self, module: str, args: list[str], env: dict[str, str], cwd: str, log: str) -> ForkedProcess:
        request = {"module": module, "args": args, "env": env, "cwd": cwd, "log": log}
        with self._asking:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
            with self._changed:
                # the zygote's imports come before its first answer (a few seconds on a busy machine)
                if not self._changed.wait_for(lambda: self._started or self.proc.poll() is not None, 60):
                    raise RuntimeError("the test zygote did not answer")
                if not self._started:
                    raise RuntimeError(f"the test zygote died (status {self.proc.returncode})")
                return ForkedProcess(self, self._started.pop(0))

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exited or self.proc.poll() is not None, timeout)
            return self._exited.get(pid)


if __name__ == "__main__":
    serve()
