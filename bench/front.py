"""The shipped nginx (deploy/nginx.conf) in front of several local server processes, as
docker-compose.yml runs it: the API spread over them, each room's WebSockets routed to one of them
by the room's path (``hash $uri consistent``). For the benchmarks that measure many processes
(bench/city.py ``--processes``)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench.loadgen import ROOT, _free_port


def site_config(upstream_ports: list[int], port: int) -> str:
    """deploy/nginx.conf with its replicas at ``upstream_ports`` and listening on ``port``."""
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    one = "    server app:8000 max_fails=3 fail_timeout=5s;\n"
    assert site.count(one) == 2, "deploy/nginx.conf's upstreams changed: read this again"
    servers = "".join(f"    server 127.0.0.1:{p} max_fails=3 fail_timeout=5s;\n" for p in upstream_ports)
    site = site.replace(one, servers)
    return site.replace("    listen 8080;\n", f"    listen 127.0.0.1:{port} backlog=16384;\n")


@contextlib.contextmanager
def nginx(upstream_ports: list[int], workers: int = 1) -> Iterator[str]:
    """The machine's nginx with the shipped site in front of ``upstream_ports``; yields its URL."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(binary).exists():
        raise RuntimeError("nginx is needed (the Debian package nginx)")
    folder = Path(tempfile.mkdtemp(prefix="mercyless-front-"))
    port = _free_port()
    (folder / "site.conf").write_text(site_config(upstream_ports, port))
    temp = "".join(f"  {kind}_temp_path {folder}/{kind};\n"
                   for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (folder / "nginx.conf").write_text(
        f"pid {folder}/nginx.pid;\nerror_log {folder}/error.log;\ndaemon off;\n"
        f"worker_processes {workers};\nworker_rlimit_nofile 65536;\n"
        f"events {{ worker_connections 32768; }}\nhttp {{\n  access_log off;\n{temp}"
        f"  include {folder}/site.conf;\n}}\n")
    proc = subprocess.Popen([binary, "-p", str(folder), "-c", str(folder / "nginx.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"nginx exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=0.5).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("nginx did not start")
            time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(folder, ignore_errors=True)
