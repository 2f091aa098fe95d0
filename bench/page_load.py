"""What opening the client costs the machine, by process: ``python -m bench.page_load [--loads 6]``.

Every browser test pays this for each player it opens, and a phone pays it at each first visit.
Debian's Chromium, headless as the tests drive it (Playwright), both as the full browser
(/usr/bin/chromium) and as the old headless shell (/usr/bin/chromium-headless-shell, what most
browser tests run on; left out when it is not installed), opens, each ``--loads`` times, in rounds
so that a drift in the machine's pace falls on all alike:

- ``blank``: a new browser context and its page on about:blank (a test's player before any load);
- ``landing``: the landing page, until its name field shows;
- ``room``: a seat's room page (its token written before the page runs), until the seat list shows;
- ``N modules`` and ``1 file``: a synthetic page whose script is N small ES modules, each
  importing the next, against the same code in one file, served by a plain static server (N: as
  many scripts as the room page fetched). Side by side they give what a module costs by itself.

For each it prints the median CPU milliseconds of a load in the browser's process (and its
helpers), the page's renderer, the Mercyless server or the static server, and Playwright's
driver, read from /proc just before the context is closed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psutil
from playwright.sync_api import Browser, Page, sync_playwright

from bench.bots import _stop, spawn_embedded
from bench.loadgen import _free_port
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, CHROMIUM_SHELL, installed
from tests.web.test_flows import SEAT_SCRIPT

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("browser", "renderer", "server", "driver")
#: a reading of the watched processes: pid -> (kind, CPU seconds so far)
Reading = dict[int, tuple[str, float]]
#: a module's body: some functions to parse and compile, as the client's modules have
BODY = "".join(f"export function f{{n}}_{j}(a) {{{{ return a.map((x) => x * {j}).filter((x) => x % 3)"
               f".reduce((p, q) => p + q, 0); }}}}\n" for j in range(40))


def cpu_by_process(server_pids: set[int]) -> Reading:
    """Every live process this benchmark watches: its kind and its CPU seconds so far."""
    out = {}
    for proc in psutil.process_iter(["cmdline"]):
        line = " ".join(proc.info["cmdline"] or [])
        if proc.pid in server_pids:
            kind = "server"
        elif "chromium" in line:
            kind = "renderer" if "--type=renderer" in line else "browser"
        elif "driver/package/cli.js" in line:
            kind = "driver"
        else:
            continue
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        out[proc.pid] = (kind, times.user + times.system)
    return out


def used_between(before: Reading, after: Reading) -> dict[str, float]:
    """CPU seconds by kind between two readings: a process that ended between them (a closed
    context's renderer) is left out, one that began counts whole."""
    out = dict.fromkeys(KINDS, 0.0)
    for pid, (kind, seconds) in after.items():
        out[kind] += seconds - (before[pid][1] if pid in before else 0.0)
    return out


def write_modules(folder: Path, count: int) -> None:
    """``many/``: ``count`` modules in a chain; ``one/``: the same code as one script."""
    (folder / "many").mkdir(parents=True)
    (folder / "one").mkdir()
    for n in range(count):
        imports = f'import {{ f{n + 1}_0 }} from "./m{n + 1}.js";\nexport const use{n} = f{n + 1}_0;\n' \
            if n + 1 < count else ""
        (folder / "many" / f"m{n}.js").write_text(imports + BODY.format(n=n))
    (folder / "one" / "m0.js").write_text("".join(BODY.format(n=n) for n in range(count)))
    for sub in ("many", "one"):
        (folder / sub / "index.html").write_text('<script type="module" src="m0.js"></script><p>ok</p>')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=6, help="loads of each page (rounds)")
    args = parser.parse_args()
    server, url = spawn_embedded(ROOT, {})
    scratch = Path(tempfile.mkdtemp(prefix="mercyless-page-load-"))
    static_port = _free_port()
    static = None
    try:
        with sync_playwright() as pw:
            browsers = {name: pw.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
                        for name, path in (("full", CHROMIUM), ("shell", CHROMIUM_SHELL))
                        if installed(path)}

            def room(page: Page) -> None:
                made = httpx.post(f"{url}/api/rooms", json={"name": "Ann"}).json()
                page.add_init_script(SEAT_SCRIPT % json.dumps([made["code"], made]))
                page.goto(f"{url}/r/{made['code']}")
                page.wait_for_selector(".seatlist .seat")

            def landing(page: Page) -> None:
                page.goto(f"{url}/")
                page.get_by_label("Your name").wait_for()

            def synthetic(sub: str) -> Callable[[Page], None]:
                def load(page: Page) -> None:
                    page.goto(f"http://127.0.0.1:{static_port}/{sub}/index.html")
                    page.wait_for_load_state("load")
                return load

            def renderers() -> int:
                return sum(kind == "renderer" for kind, _ in cpu_by_process(set()).values())

            idle_renderers = renderers()  # with no page open (a spare, kept ready for the next)

            def one_load(browser: Browser, load: Callable[[Page], None] | None) -> dict[str, float]:
                # the last load's renderer gone first: its ending would count as this load's work
                for _ in range(100):
                    if renderers() <= idle_renderers:
                        break
                    time.sleep(0.05)
                watched = {server.pid} | ({static.pid} if static else set())
                before = cpu_by_process(watched)
                context = browser.new_context(service_workers="block", viewport={"width": 390, "height": 844},
                                              device_scale_factor=2, is_mobile=True, has_touch=True)
                page = context.new_page()
                if load is not None:
                    load(page)
                time.sleep(0.3)  # the load's last tasks (its idle work) before the reading
                after = cpu_by_process(watched)
                context.close()
                return used_between(before, after)

            # warm-up (the server's first requests, the disk's caches), counting the room page's
            # scripts; the timed loads listen to no request (the driver would then forward each)
            scripts: set[str] = set()

            def counted_room(page: Page) -> None:
                page.on("request", lambda r: scripts.add(r.url) if r.resource_type == "script" else None)
                room(page)

            for i, browser in enumerate(browsers.values()):
                one_load(browser, room if i else counted_room)
            count = len(scripts)
            write_modules(scratch, count)
            command = [sys.executable, "-m", "http.server", str(static_port), "-b", "127.0.0.1",
                       "-d", str(scratch)]
            static = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(50):
                try:
                    httpx.get(f"http://127.0.0.1:{static_port}/one/index.html", timeout=0.5)
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            cases: dict[str, Callable[[Page], None] | None] = {
                "blank": None, "landing": landing, "room": room,
                f"{count} modules": synthetic("many"), "1 file": synthetic("one")}
            runs: dict[str, list[dict[str, float]]] = {
                f"{name} ({which})": [] for which in browsers for name in cases}
            for _ in range(args.loads):
                for which, browser in browsers.items():
                    for name, load in cases.items():
                        runs[f"{name} ({which})"].append(one_load(browser, load))
            for browser in browsers.values():
                browser.close()
        print(f"CPU ms per load (median of {args.loads}); the room page fetched {count} scripts")
        print(f"{'':22}" + "".join(f"{k:>10}" for k in (*KINDS, "all")))
        for name, rows in runs.items():
            medians = [statistics.median(r[k] for r in rows) * 1000 for k in KINDS]
            total = statistics.median(sum(r.values()) for r in rows) * 1000
            print(f"{name:22}" + "".join(f"{m:10.0f}" for m in medians) + f"{total:10.0f}")
    finally:
        if static is not None:
            static.kill()
            static.wait()
        _stop(server)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
