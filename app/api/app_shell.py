"""The browser client as an installable app: the service worker at ``/sw.js`` (web/sw.js with the
shell's version and file list written in), the web-app manifest, and the shell's version on every
static file.

The *shell* is every file of web/ but the worker itself and the folder's README. Its version is a
hash of their contents, so it changes whenever any of them does: a server upgraded, or a file
edited while a development server runs (the files are looked at again at most once a second).
The worker caches the whole set under that version and refuses a file answered with another
version (``x-shell-version``): behind a balancer, a rolling upgrade's old and new processes never
make one mixed set (docs/deploy.md "Phones: HTTPS, install, notifications").
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import Scope

#: Not part of the shell: the worker (its version is written into it) and the folder's notes.
OUTSIDE_SHELL = frozenset({"sw.js", "README.md"})
#: How often, at most, the files are looked at again for a change (a stat of each).
RESCAN_S = 1.0
VERSION_HEADER = "x-shell-version"
#: The worker and the manifest are asked again on every visit: a browser that kept either would
#: keep an old shell (the worker's own checks skip the HTTP cache too: updateViaCache "none").
NO_CACHE = {"cache-control": "no-cache"}


class Shell:
    """The shell's files under ``web_dir`` and their version (a hash of their paths and contents)."""

    def __init__(self, web_dir: Path) -> None:
        self.web_dir = web_dir
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._checked = -RESCAN_S
        self.version = ""
        self.files: list[str] = []

    def _scan(self) -> tuple[tuple[str, int, int], ...]:
        found = []
        for path in sorted(self.web_dir.rglob("*")):
            rel = path.relative_to(self.web_dir).as_posix()
            if rel in OUTSIDE_SHELL or not path.is_file() or any(p.startswith(".") for p in rel.split("/")):
                continue
            st = path.stat()
            found.append((rel, st.st_mtime_ns, st.st_size))
        return tuple(found)

    def current(self) -> tuple[str, list[str]]:
        """(version, the shell's URLs); the hash is made again only when a file changed."""
        now = time.monotonic()
        if now - self._checked >= RESCAN_S:
            self._checked = now
            try:
                signature = self._scan()
            except OSError:  # a file replaced under the scan: the next look sees the new one
                signature = self._signature or ()
            if signature != self._signature:
                digest = hashlib.sha256()
                for rel, _, _ in signature:
                    digest.update(rel.encode() + b"\0")
                    try:
                        digest.update((self.web_dir / rel).read_bytes())
                    except OSError:
                        digest.update(b"\1missing")
                self._signature = signature
                self.version = digest.hexdigest()[:16]
                self.files = ["/" + rel for rel, _, _ in signature]
        return self.version, self.files


class ShellFiles(StaticFiles):
    """web/ as static files, each answer with the shell's version (the worker checks it)."""

    def __init__(self, shell: Shell) -> None:
        super().__init__(directory=shell.web_dir, html=True)
        self.shell = shell

    def file_response(self, full_path: os.PathLike[str] | str, stat_result: os.stat_result, scope: Scope,
                      status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers[VERSION_HEADER] = self.shell.current()[0]
        return response


def shell_router(shell: Shell) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    template = shell.web_dir / "sw.js"

    @router.get("/sw.js")
    async def service_worker() -> Response:
        version, files = shell.current()
        try:
            text = template.read_text(encoding="utf-8")
        except OSError:
            return Response(status_code=404)
        text = text.replace('"__SHELL_VERSION__"', json.dumps(version))
        text = text.replace("[/*__SHELL_FILES__*/]", json.dumps(files))
        return Response(text, media_type="text/javascript", headers={**NO_CACHE, VERSION_HEADER: version})

    @router.get("/manifest.webmanifest")
    async def manifest() -> Response:
        path = shell.web_dir / "manifest.webmanifest"
        if not path.is_file():
            return Response(status_code=404)
        return FileResponse(path, media_type="application/manifest+json",
                            headers={**NO_CACHE, VERSION_HEADER: shell.current()[0]})

    return router
