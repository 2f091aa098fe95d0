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
import mimetypes
import os
import time
from pathlib import Path
from typing import NamedTuple

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.staticfiles import NotModifiedResponse
from starlette.types import Scope

#: Not part of the shell: the worker (its version is written into it) and the folder's notes.
OUTSIDE_SHELL = frozenset({"sw.js", "README.md"})
#: How often, at most, the files are looked at again for a change (a stat of each).
RESCAN_S = 1.0
VERSION_HEADER = "x-shell-version"
#: The worker and the manifest are asked again on every visit: a browser that kept either would
#: keep an old shell (the worker's own checks skip the HTTP cache too: updateViaCache "none").
NO_CACHE = {"cache-control": "no-cache"}


class ShellFile(NamedTuple):
    """One file of the shell as it was when the version was made."""

    body: bytes
    etag: str
    media_type: str


class Shell:
    """The shell's files under ``web_dir`` and their version (a hash of their paths and contents)."""

    def __init__(self, web_dir: Path, rescan_s: float = RESCAN_S) -> None:
        self.web_dir = web_dir
        self.rescan_s = rescan_s
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._checked = -rescan_s
        self.version = ""
        self.files: list[str] = []
        self.contents: dict[str, ShellFile] = {}

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
        if now - self._checked >= self.rescan_s:
            self._checked = now
            try:
                signature = self._scan()
            except OSError:  # a file replaced under the scan: the next look sees the new one
                signature = self._signature or ()
            if signature != self._signature:
                digest = hashlib.sha256()
                contents = {}
                for rel, _, _ in signature:
                    digest.update(rel.encode() + b"\0")
                    try:
                        body = (self.web_dir / rel).read_bytes()
                    except OSError:
                        digest.update(b"\1missing")
                        continue
                    digest.update(body)
                    contents[rel] = ShellFile(body, f'"{hashlib.sha256(body).hexdigest()[:32]}"',
                                              mimetypes.guess_type(rel)[0] or "text/plain")
                self._signature = signature
                self.version = digest.hexdigest()[:16]
                self.files = ["/" + rel for rel, _, _ in signature]
                self.contents = contents
        return self.version, self.files

    def file(self, rel: str) -> tuple[str, ShellFile | None]:
        """(version, the file at ``rel`` as that version has it, or None: not one of the shell's)."""
        version, _ = self.current()
        return version, self.contents.get(rel)


class ShellFiles(StaticFiles):
    """web/ as static files, each answer with the shell's version (the worker checks it)."""

    def __init__(self, shell: Shell) -> None:
        super().__init__(directory=shell.web_dir, html=True)
        self.shell = shell

    async def get_response(self, path: str, scope: Scope) -> Response:
        # -- speed: the shell's files from the bytes its version was hashed from (read once for
        # that), not from the disk through a worker thread for each request: 0.85 -> 0.25 ms of
        # the server's CPU a file, and a page fetches ~65 of them (docs/performance.md). The
        # body is then always the one the version names. The rest (a folder, a missing file,
        # HEAD) as StaticFiles answers it.
        rel = path.replace(os.sep, "/").strip("/")
        rel = "index.html" if rel in ("", ".") else rel
        version, found = self.shell.file(rel) if scope["method"] == "GET" else ("", None)
        if found is None:
            return await super().get_response(path, scope)
        headers = {"etag": found.etag, VERSION_HEADER: version}
        if self.is_not_modified(Headers(headers), Headers(scope=scope)):
            unchanged = NotModifiedResponse(Headers(headers))
            unchanged.headers[VERSION_HEADER] = version  # as StaticFiles' own 304 had it here
            return unchanged
        return Response(found.body, media_type=found.media_type, headers=headers)

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
