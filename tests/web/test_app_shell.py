"""The client as an app on a phone (web/sw.js, web/js/pwa.js, wake.js, notify.js, net.js's resume):
the manifest and its icons, the shell opened from the service worker's cache with the server's
static files cut, a new version taking the cache over whole, the screen kept on while seated in a
round (and the video fallback on a LAN's http:// page, which has neither service worker nor wake
lock nor notifications), the socket back at once after the page was frozen, a dead socket found
out as soon as the page is shown again, and the turn notification of a hidden page.

Freezing needs a page Playwright's own contexts do not give: they keep every page "visible" (focus
emulation holds a capturer on it) and Chromium freezes only hidden pages. So this module also runs
a Chromium of its own, reached over CDP with Playwright's defaults off, whose pages hide and freeze
as a phone's do; it resolves ``lan.test`` to this machine, an http:// origin that is not a secure
context, as http://192.168.x.x is not.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.app.harness import ROOT, ServerProcess

from .app_shell_kit import (
    ALL_FIVES,
    CACHES_JS,
    CAPTURE_NOTIFICATIONS,
    FAKE_WAKE_LOCK,
    HIDE_AT_WILL,
    INSTALL_OFFER,
    RECORD_VERSIONS,
    RECORD_VIDEO,
    Watcher,
    cut_static_files,
    first_at,
    next_version,
    png_size,
    served_version,
    shell_list,
    wait_for_caches,
    watch_errors,
)
from .conftest import CHROMIUM
from .test_flows import seat_browser
from .test_game import play_until_over
from .ui import add_bot, take_turn

# -- a server of this module's own, on a copy of web/ it can change, and a Chromium that freezes --


@pytest.fixture(scope="module")
def shell_server() -> Iterator[ServerProcess]:
    home = Path(tempfile.mkdtemp(prefix="mercyless-shell-"))
    shutil.copytree(ROOT / "web", home / "web")
    (home / "migrations").symlink_to(ROOT / "migrations")
    (home / "alembic.ini").symlink_to(ROOT / "alembic.ini")
    # bots slow enough that a page frozen after its move misses theirs
    # a server heartbeat of a second (WS_PING_*): a frozen page outlives it
    proc = ServerProcess(mercyless_home=str(home), bot_delay_ms=400, allowed_hosts=["lan.test"],
                         ws_ping_interval_s=1, ws_ping_timeout_s=1).start()
    proc.home = home
    yield proc
    err = proc.stop()
    shutil.rmtree(home, ignore_errors=True)
    assert "Traceback" not in err, err[-3000:]


@pytest.fixture(scope="module")
def own_chromium(browser) -> Iterator[object]:
    profile = tempfile.mkdtemp(prefix="mercyless-chromium-")
    proc = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                             "--disable-background-networking", "--remote-debugging-port=0",
                             f"--user-data-dir={profile}", "--host-resolver-rules=MAP lan.test 127.0.0.1",
                             "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = None
        for line in proc.stderr:
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                endpoint = found.group(1)
                break
        assert endpoint, "Chromium gave no DevTools address"
        connected = browser.browser_type.connect_over_cdp(endpoint, no_defaults=True)
        yield connected
        connected.close()
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


# -- the tests ------------------------------------------------------------------------------------


def test_the_manifest_its_icons_and_the_worker_are_served(web_server):
    answer = httpx.get(f"{web_server.url}/manifest.webmanifest")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/manifest+json")
    manifest = answer.json()
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    assert manifest["name"] == "Mercyless" and manifest["short_name"]
    index = httpx.get(f"{web_server.url}/").text
    assert f'<meta name="theme-color" content="{manifest["theme_color"]}">' in index
    assert '<link rel="manifest" href="/manifest.webmanifest">' in index
    sizes = {}
    for icon in manifest["icons"]:
        png = httpx.get(f"{web_server.url}{icon['src']}")
        assert png.status_code == 200 and png.headers["content-type"] == "image/png"
        width, height = png_size(png.content)
        assert icon["sizes"] == f"{width}x{height}", icon
        sizes.setdefault(icon.get("purpose", "any"), set()).add(width)
    assert {192, 512} <= sizes["any"] and 512 in sizes["maskable"]
    # the worker: never kept by the HTTP cache, its version written in, the whole shell listed
    sw = httpx.get(f"{web_server.url}/sw.js")
    assert sw.headers["cache-control"] == "no-cache" and "javascript" in sw.headers["content-type"]
    version = sw.headers["x-shell-version"]
    assert re.fullmatch(r"[0-9a-f]{16}", version) and f'const VERSION = "{version}";' in sw.text
    listed = shell_list(sw.text)
    on_disk = {"/" + p.relative_to(ROOT / "web").as_posix() for p in (ROOT / "web").rglob("*") if p.is_file()}
    assert set(listed) == on_disk - {"/sw.js", "/README.md"}
    assert not any(p.startswith(("/api/", "/ws/")) for p in listed)
    assert httpx.get(f"{web_server.url}/js/app.js").headers["x-shell-version"] == version


def test_the_shell_opens_from_its_cache_and_a_new_version_replaces_it_whole(browser, shell_server):
    """With every static file cut (only /api/ and /ws/ reach the server) the landing page and a
    room open from the worker's cache; after a file changes on the server the next version is
    cached whole, the old cache dropped, and a page runs either version's files, never a mix."""
    errors: list[str] = []
    ctx = browser.new_context(base_url=shell_server.url, viewport={"width": 390, "height": 844},
                              is_mobile=True, has_touch=True)
    page = ctx.new_page()
    watch_errors(page, errors)
    first = served_version(shell_server)
    made = shell_server.create("Ann")
    seat_browser(page, shell_server, made["code"], made)
    page.wait_for_selector(".lobby .bigcode")
    page.wait_for_function("() => !!navigator.serviceWorker.controller")
    assert page.evaluate(CACHES_JS) == [f"mercyless-shell-{first}"]

    cut: list[str] = []
    ctx.route("**/*", cut_static_files(cut))
    page.reload()
    page.wait_for_selector(".lobby .bigcode")                   # the room: shell cached, socket live
    expect(page.locator(".seatlist .seat")).to_have_count(1)
    page.goto("/")
    expect(page.get_by_label("Your name")).to_be_visible()     # the landing page
    assert cut == [], cut                                      # nothing asked the network for a file
    ctx.unroute("**/*")

    # the server is upgraded: one file changes, so the version does
    app_js = shell_server.home / "web" / "js" / "app.js"
    app_js.write_text(app_js.read_text() + '\nwindow.__shellMark = "next";\n')
    second = next_version(shell_server, first)
    page.reload()
    expect(page.get_by_label("Your name")).to_be_visible()
    assert page.evaluate("() => window.__shellMark") is None   # this load: the old set, whole
    wait_for_caches(page, [f"mercyless-shell-{second}"])
    cached = page.evaluate("""async (name) => {
      const cache = await caches.open(name);
      const out = {};
      for (const req of await cache.keys()) {
        out[new URL(req.url).pathname] = await (await cache.match(req)).text();
      }
      return out;
    }""", f"mercyless-shell-{second}")
    listed = shell_list(httpx.get(f"{shell_server.url}/sw.js").text)
    assert sorted(cached) == sorted(listed)
    for path, text in cached.items():                          # every file of the new version
        assert text == httpx.get(f"{shell_server.url}{path}").text, path
    page.reload()
    expect(page.get_by_label("Your name")).to_be_visible()
    assert page.evaluate("() => window.__shellMark") == "next"

    # in the middle of a rolling upgrade a file comes from a process of another version: that
    # set is refused whole and the shell in use stays
    app_js.write_text(app_js.read_text() + '\nwindow.__shellMark = "third";\n')
    next_version(shell_server, second)

    def older_process(route):
        answer = route.fetch()
        route.fulfill(response=answer, headers={**answer.headers, "x-shell-version": second})

    ctx.route("**/js/log.js", older_process)
    outcome = page.evaluate("""async () => {
      const reg = await navigator.serviceWorker.getRegistration();
      await reg.update();
      const next = reg.installing || reg.waiting;
      if (!next) return 'no update';
      if (next.state !== 'installing') return next.state;
      return await new Promise((done) => next.addEventListener('statechange',
        () => next.state !== 'installing' && done(next.state)));
    }""")
    assert outcome == "redundant"
    # the refused set's cache is gone once every install of it has ended (the browser may have
    # begun one of its own on the reload, which ends a moment after this one)
    wait_for_caches(page, [f"mercyless-shell-{second}"])
    ctx.close()
    assert not errors, errors


def test_the_screen_stays_on_while_seated_in_a_round_and_no_longer(pages, web_server):
    made = web_server.create("Ann", rules={"turn_timer_s": 0, "deck": ALL_FIVES, "hand_size": 2})
    page = pages.new(phone=True)
    page.add_init_script(HIDE_AT_WILL)
    page.add_init_script(FAKE_WAKE_LOCK)
    seat_browser(page, web_server, made["code"], made)
    add_bot(page, "easy")
    assert page.evaluate("() => window.__wake") == []          # the lobby: the phone's own setting
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")
    page.wait_for_function("() => window.__held() === 1")
    page.evaluate("() => window.__setHidden(true)")            # another app in front: let go
    page.wait_for_function("() => window.__held() === 0")
    page.evaluate("() => window.__setHidden(false)")           # back: taken again
    page.wait_for_function("() => window.__held() === 1")
    # the setting turns it off, and on again
    page.locator("button.settings-btn").click()
    page.locator("input[data-key=keep-awake]").uncheck()
    page.wait_for_function("() => window.__held() === 0")
    assert page.evaluate("() => localStorage.getItem('mercyless.awake')") == "off"
    page.locator("input[data-key=keep-awake]").check()
    page.wait_for_function("() => window.__held() === 1")
    page.get_by_role("button", name="Done").click()
    # the round ends: let go until the next one
    play_until_over([page], limit_s=30)
    page.wait_for_function("() => window.__held() === 0")
    assert page.evaluate("() => window.__wake") == ["request", "release"] * 3


def test_a_lan_page_has_no_worker_nor_notifications_and_keeps_the_screen_on_by_video(own_chromium,
                                                                                     shell_server):
    """http://lan.test (as http://192.168.x.x) is no secure context: no service worker, no
    notification switch, no Wake Lock API; the muted video keeps the screen on instead, started
    after a tap, stopped with the round's hold."""
    errors: list[str] = []
    ctx = own_chromium.new_context(base_url=f"http://lan.test:{shell_server.port}", is_mobile=True,
                                   has_touch=True, viewport={"width": 390, "height": 844},
                                   reduced_motion="reduce")
    page = ctx.new_page()
    watch_errors(page, errors)
    page.add_init_script(HIDE_AT_WILL)
    page.add_init_script(RECORD_VIDEO)
    made = shell_server.create("Ann", rules={"turn_timer_s": 0, "deck": ALL_FIVES})
    seat_browser(page, shell_server, made["code"], made)
    page.wait_for_selector(".lobby .bigcode")
    secure = page.evaluate("() => [isSecureContext, 'serviceWorker' in navigator, 'wakeLock' in navigator]")
    assert secure == [False, False, False]
    # the host's line on what a guest's phone gets on a link of each kind
    lines = page.evaluate("""async () => {
      const { linkFeaturesLine } = await import('/js/pwa.js');
      return ['http://lan.test/r/X', 'https://play.example.org/r/X', 'http://127.0.0.1:8000/r/X', 'nonsense']
        .map(linkFeaturesLine);
    }""")
    assert lines[0].startswith("Phones on this http link play fully") and "https link" in lines[0]
    assert lines[1].startswith("Phones on this link can also install the app") and lines[2:] == ["", ""]
    page.locator("button.settings-btn").click()
    expect(page.locator("input[data-key=keep-awake]")).to_be_checked()
    expect(page.locator("input[data-key=notify]")).to_have_count(0)
    page.get_by_role("button", name="Done").click()
    add_bot(page, "easy")
    assert page.evaluate("() => window.__video") == []
    page.get_by_role("button", name="Start the game").click()  # a tap: the video may play
    page.wait_for_selector(".table .hand-card")
    page.wait_for_function("() => window.__video.join() === 'play'")
    page.evaluate("() => window.__setHidden(true)")
    page.wait_for_function("() => window.__video.join() === 'play,pause'")
    page.evaluate("() => window.__setHidden(false)")
    page.wait_for_function("() => window.__video.join() === 'play,pause,play'")
    ctx.close()
    assert not errors, errors


def test_a_hidden_page_is_told_its_turn_came(full_pages, web_server):
    made = web_server.create("Ann", rules={"turn_timer_s": 0, "deck": ALL_FIVES})
    code = made["code"]
    # the notice comes by the worker, which the headless shell gives no notifications
    page = full_pages.new(phone=True, service_workers="allow")
    page.context.grant_permissions(["notifications"])
    page.add_init_script(HIDE_AT_WILL)
    page.add_init_script(CAPTURE_NOTIFICATIONS)
    seat_browser(page, web_server, code, made)
    page.wait_for_selector(".lobby .bigcode")
    page.wait_for_function("() => !!navigator.serviceWorker.controller")
    page.locator("button.settings-btn").click()
    page.locator("input[data-key=notify]").check()             # a tap asks the browser
    expect(page.locator("input[data-key=notify]")).to_be_checked()
    assert page.evaluate("() => localStorage.getItem('mercyless.notify')") == "on"
    page.get_by_role("button", name="Done").click()
    add_bot(page, "easy")
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".table")).to_have_attribute("data-turn", "me", timeout=15_000)
    assert page.evaluate("() => window.__notes") == []          # the page is in sight: no notice
    page.evaluate("() => window.__setHidden(true)")
    assert take_turn(page)
    page.wait_for_function("() => window.__notes.length > 0", timeout=15_000)
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    notes = page.evaluate("() => window.__notes")
    assert notes == [{"via": "worker", "title": f"Your turn in room {code}", "tag": f"mercyless-turn-{code}",
                      "url": f"{web_server.url}/r/{code}"}]
    page.evaluate("() => window.__setHidden(false)")
    assert take_turn(page)
    expect(page.locator(".table")).to_have_attribute("data-turn", "me", timeout=15_000)
    assert len(page.evaluate("() => window.__notes")) == 1     # in sight again: none


def test_a_page_shown_again_finds_its_dead_socket_at_once(pages, web_server):
    """A phone back from sleep: its socket looks open but nothing gets through (the network
    changed, a NAT forgot it). The heartbeat would notice after up to 23 s; being shown again
    makes the page ask at once, and reconnect when no answer comes."""
    made = web_server.create("Ann")
    page = pages.new(phone=True)
    page.add_init_script(HIDE_AT_WILL)
    net = {"sockets": 0, "dead": False}

    def proxy(ws):
        server = ws.connect_to_server()
        net["sockets"] += 1
        first = net["sockets"] == 1
        ws.on_message(lambda m: None if net["dead"] and first else server.send(m))
        server.on_message(lambda m: None if net["dead"] and first else ws.send(m))

    page.route_web_socket(re.compile(r".*/ws/.*"), proxy)
    seat_browser(page, web_server, made["code"], made)
    expect(page.locator(".seatlist .seat")).to_have_count(1)
    net["dead"] = True
    web_server.join(made["code"], "Bob")                       # meanwhile, someone joins
    page.evaluate("() => { window.__setHidden(true); window.__setHidden(false); }")
    expect(page.locator(".seatlist .seat")).to_have_count(2, timeout=6_000)
    assert net["sockets"] == 2


def test_the_install_hint_shows_where_the_browser_offers_it(pages, web_server, artifacts):
    page = pages.new(phone=True, viewport={"width": 390, "height": 844})
    page.goto("/")
    expect(page.get_by_label("Your name")).to_be_visible()
    expect(page.locator(".install-hint")).to_have_count(0)      # not offered: nothing
    assert page.evaluate(INSTALL_OFFER) is True                 # the browser's own bar held back
    hint = page.get_by_role("complementary", name="Install the app")
    expect(hint).to_be_visible()
    page.get_by_label("Your name").fill("Ann")
    page.screenshot(path=str(artifacts / "install-prompt.png"))
    page.get_by_role("button", name="Create a room").click()
    page.wait_for_selector(".lobby .bigcode")
    expect(hint).to_be_visible()                                # the lobby too
    add_bot(page, "easy")
    page.get_by_role("button", name="Start the game").click()
    page.wait_for_selector(".table .hand-card")
    expect(hint).to_have_count(0)                               # never over the table
    page.get_by_role("button", name="Leave", exact=True).click()
    page.get_by_role("button", name="Leave room").click()
    expect(hint).to_be_visible()
    hint.get_by_role("button", name="Install").click()
    expect(hint).to_have_count(0)
    assert page.evaluate("() => window.__prompted") == 1
    page.evaluate(INSTALL_OFFER)                                # offered again, put away for now
    hint.get_by_role("button", name="Not now").click()
    expect(hint).to_have_count(0)
    page.evaluate(INSTALL_OFFER)
    page.evaluate("() => new Promise(requestAnimationFrame)")
    expect(hint).to_have_count(0)


def test_a_frozen_page_is_current_at_once_when_it_comes_back(own_chromium, shell_server):
    """A page put away mid-round is hidden and frozen while the bots play on, past the server's
    heartbeat. Unfrozen (still out of sight, as Chrome wakes a frozen background tab now and then)
    it is current at once: its socket, which Chromium fails on a frozen page, is opened again in
    the resume's or the close's own task, not after the reconnect backoff. Timed from the resume
    to the current state on the page's clock, against a fresh load of the page timed the same way
    in the same run; then, in sight again, the player's move is accepted."""
    made = shell_server.create("Ann", rules={"turn_timer_s": 0, "deck": ALL_FIVES})
    code, ann = made["code"], made["player_id"]
    errors: list[str] = []
    ctx = own_chromium.contexts[0]              # Playwright's defaults off: its pages can freeze
    page = ctx.new_page()
    watch_errors(page, errors)
    page.add_init_script(RECORD_VERSIONS)
    page.goto(f"{shell_server.url}/")
    page.evaluate("""([code, seat]) => localStorage.setItem('mercyless.rooms', JSON.stringify(
        {[code]: {token: seat.token, player_id: seat.player_id, at: Date.now()}}))""", [code, made])
    page.goto(f"{shell_server.url}/r/{code}")
    add_bot(page, "easy")
    add_bot(page, "easy")
    page.get_by_role("button", name="Start the game").click()
    watcher = Watcher(shell_server, code)
    cdp = ctx.new_cdp_session(page)
    try:
        expect(page.locator(".table")).to_have_attribute("data-turn", "me", timeout=15_000)
        assert take_turn(page)
        seen = page.evaluate("() => Number(document.body.dataset.version)")
        cdp.send("Page.setWebLifecycleState", {"state": "frozen"})   # hidden, then frozen
        watcher.until(lambda: watcher.waits_for(ann) and watcher.version >= seen + 2)  # both bots moved
        # frozen past the server's heartbeat (WS_PING_INTERVAL_S + WS_PING_TIMEOUT_S, 1 s each
        # here) and DROP_DELAY_MS (2 s): had the server dropped the socket, the others know by then
        try:
            watcher.until(lambda: any(e.get("kind") == "disconnected" and e.get("player") == ann
                                      for e in watcher.events), timeout=1 + 1 + 2 + 1)
            dropped = True
        except TimeoutError:
            dropped = False
        target = watcher.version
        cdp.send("Page.setWebLifecycleState", {"state": "active"})
        page.wait_for_function("v => Number(document.body.dataset.version) >= v", arg=target, polling=50)
        resumed, versions, sockets = page.evaluate(
            "() => [window.__resumed, window.__versions, window.__sockets]")
        assert len(resumed) == 1
        back_in = first_at(versions, target, resumed[0])
        reopened = [s for s in sockets if s["at"] >= resumed[0]]
        assert all(s["atOnce"] for s in reopened), sockets
        cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": True})  # in sight again
        expect(page.locator(".table")).to_have_attribute("data-turn", "me")
        before = len(watcher.events)
        assert take_turn(page)                                           # and her move counts
        watcher.until(lambda: any(e.get("player") == ann and e["kind"] in ("played", "drew")
                                  for e in watcher.events[before:]))
        # the baseline: the page loaded afresh on a state that holds still (the bots wait for Ann)
        watcher.until(lambda: watcher.waits_for(ann))
        target = watcher.version
        page.reload()
        page.wait_for_function("v => Number(document.body.dataset.version) >= v", arg=target)
        fresh = first_at(page.evaluate("() => window.__versions"), target, 0.0)
        print(f"\nresume to current: {back_in:.0f} ms (sockets opened again: {len(reopened)}); a fresh load"
              f" to current: {fresh:.0f} ms; the server dropped the frozen page's socket: {dropped}")
        assert back_in < fresh
    finally:
        cdp.detach()
        watcher.close()
        page.close()
    # Chromium fails a frozen page's socket, and says so in the console
    assert [e for e in errors if "Page entered Back-Forward Cache" not in e] == [], errors
