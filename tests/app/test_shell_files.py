"""The client's files as the server answers them (app/api/app_shell.py): each from the bytes the
shell's version was made from, with that version, an ETag of its own and a 304 for a copy still
good; what is not one of the shell's files as StaticFiles answers it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from app.api.app_shell import VERSION_HEADER, Shell, ShellFiles


@pytest.fixture
def web(tmp_path: Path) -> Path:
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "app.js").write_text('export const a = 1;\n')
    (tmp_path / "css").mkdir()
    (tmp_path / "css" / "style.css").write_text("body { color: red; }\n")
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title>\n")
    (tmp_path / "README.md").write_text("notes\n")
    return tmp_path


def client_for(shell: Shell) -> httpx.AsyncClient:
    app = Starlette()
    app.mount("/", ShellFiles(shell))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://mercyless.test")


async def test_a_file_comes_with_its_type_version_and_etag_and_a_good_copy_gets_304(web: Path) -> None:
    shell = Shell(web)
    client = client_for(shell)
    got = await client.get("/js/app.js")
    assert got.status_code == 200
    assert got.content == b"export const a = 1;\n"
    assert got.headers["content-type"].split(";")[0] in ("text/javascript", "application/javascript")
    assert got.headers[VERSION_HEADER] == shell.current()[0]
    etag = got.headers["etag"]
    again = await client.get("/js/app.js", headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers[VERSION_HEADER] == shell.current()[0]
    css = await client.get("/css/style.css")
    assert css.headers["content-type"].startswith("text/css") and css.headers["etag"] != etag
    index = await client.get("/")
    assert index.status_code == 200 and index.content.startswith(b"<!doctype html>")
    assert index.headers["content-type"].startswith("text/html")


async def test_an_edited_file_is_answered_new_with_the_new_version_and_etag(web: Path) -> None:
    shell = Shell(web, rescan_s=0)  # looked at again on every request
    client = client_for(shell)
    first = await client.get("/js/app.js")
    (web / "js" / "app.js").write_text("export const a = 2; // longer\n")
    second = await client.get("/js/app.js")
    assert second.content == b"export const a = 2; // longer\n"
    assert second.headers[VERSION_HEADER] != first.headers[VERSION_HEADER]
    assert second.headers["etag"] != first.headers["etag"]
    stale = await client.get("/js/app.js", headers={"if-none-match": first.headers["etag"]})
    assert stale.status_code == 200 and stale.content == second.content


async def test_what_is_not_the_shells_is_answered_as_static_files_do(web: Path) -> None:
    client = client_for(Shell(web))
    assert (await client.get("/README.md")).content == b"notes\n"  # outside the shell, still a file
    assert (await client.get("/js/missing.js")).status_code == 404
    head = await client.head("/js/app.js")
    assert head.status_code == 200 and head.content == b""
    assert head.headers[VERSION_HEADER] == (await client.get("/js/app.js")).headers[VERSION_HEADER]
    assert (await client.post("/js/app.js")).status_code == 405
