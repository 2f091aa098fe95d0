"""A tap on a card to the card leaving the hand, on a phone: ``python -m bench.tap_latency``.

Two phones (Chromium, 390x844, touch, the CPU slowed to DevTools' mid-tier device as
``tests/web/phone_cpu.py`` calibrates it), each in a room of its own against an easy bot, play
``--taps`` cards each, the taps alternated between them: one with the play shown at once (the
client's default), one as before, waiting for the server's patch (``localStorage``
``mercyless.optimistic = "off"``). The deck is all fives, so every card in the hand can be played
(issue #44: the latency counts from the tap that commits a play; wilds ask a colour first and are
not measured).

Each tap is a real touch (CDP touch events, at the card's centre; no Playwright actionability
checks, whose listeners would run in the page's input task). The page notes the touch's
``pointerdown`` time stamp, and when the hand loses a card, the time the next frame has laid the
change out (a ``ResizeObserver`` in that frame: after its style and layout, before its paint).
Also the time to the server's patch laid out the same way (``body[data-version]`` changed).
Prints median / p90 / p95 / max per mode, in ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

from bench.bots import _stop, spawn_embedded
from tests.web.phone_cpu import benchmark_index, slow_to_mid_phone

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# every card plays on any other; 15 cards a hand (the most): a round gives 15 taps
FIVES = {"r-5": 12, "y-5": 12, "g-5": 12, "b-5": 12}
RULES = {"turn_timer_s": 0, "deck": FIVES, "hand_size": 15}

MEASURE = """
window.__taps = [];
// the frame that draws a change: its animation-frame callbacks run, then its style and layout,
// then its ResizeObservers, then its paint. A probe resized in that frame's callback reports
// after the frame's layout, before any task queued meanwhile (a posted message would wait
// behind the server's patch, which often comes in right then)
const probe = document.createElement('div');
probe.setAttribute('aria-hidden', 'true');
Object.assign(probe.style,
  {position: 'fixed', left: '0', top: '0', width: '1px', height: '1px', visibility: 'hidden'});
const asked = [];
const waiting = [];
new ResizeObserver(() => {
  const now = performance.now();
  for (const done of waiting.splice(0)) done(now);
}).observe(probe);
addEventListener('DOMContentLoaded', () => document.body.append(probe));
const afterFrame = (done) => {
  asked.push(done);
  if (asked.length > 1) return;  // one resize a frame (two would cancel out)
  requestAnimationFrame(() => {
    waiting.push(...asked.splice(0));
    probe.style.width = probe.style.width === '2px' ? '1px' : '2px';
  });
};
addEventListener('pointerdown', (e) => {
  const card = e.target.closest && e.target.closest('.hand .hand-card');
  if (!card) return;
  const hand = card.parentElement;
  const t0 = e.timeStamp;
  const n = hand.querySelectorAll('.hand-card').length;
  const version = document.body.dataset.version;
  const tap = {left: null, settled: null, leftFirst: null};
  const watch = new MutationObserver(() => {
    if (tap.left === null && hand.querySelectorAll('.hand-card').length < n) {
      tap.leftFirst = document.body.dataset.version === version;
      tap.left = 0;
      afterFrame((t) => { tap.left = t - t0; });
    }
    if (tap.settled === null && document.body.dataset.version !== version) {
      tap.settled = 0;
      afterFrame((t) => { tap.settled = t - t0; });
    }
    if (tap.left !== null && tap.settled !== null) watch.disconnect();
  });
  watch.observe(hand, {childList: true});
  watch.observe(document.body, {attributes: true, attributeFilter: ['data-version']});
  window.__taps.push(tap);
}, {capture: true});
"""

SEAT = """([code, seat]) => localStorage.setItem('mercyless.rooms', JSON.stringify(
  {[code]: {token: seat.token, player_id: seat.player_id, at: Date.now()}}))"""
OVER = "['round_over', 'match_over'].includes(document.body.dataset.status)"
MEASURED = "n => (window.__taps[n] || {}).left > 0 && window.__taps[n].settled > 0"

READY = """() => {
  const table = document.querySelector('.table');
  if (document.body.dataset.status !== 'playing' || !table || table.dataset.turn !== 'me') return false;
  if (document.querySelector('#dlg[open]') || document.body.classList.contains('busy')) return false;
  if (document.getAnimations().some((a) => a.playState === 'running')) return false;
  return !!document.querySelector('.hand .hand-card.playable');
}"""

CARD_AT = """() => {
  const card = document.querySelector('.hand .hand-card.playable');
  card.scrollIntoView({block: 'center'});
  const r = card.getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
}"""


class Phone:
    """One phone in a room of its own against an easy bot, the play shown at once or not."""

    def __init__(self, browser, url: str, optimistic: bool, rate: float | None) -> None:
        self.name = "new (shown at once)" if optimistic else "old (waits for the patch)"
        made = httpx.post(f"{url}/api/rooms", json={"name": "Ann", "rules": RULES}, timeout=10).json()
        self.ctx = browser.new_context(base_url=url, viewport={"width": 390, "height": 844}, is_mobile=True,
                                       has_touch=True, device_scale_factor=3, reduced_motion="no-preference")
        self.ctx.add_init_script(MEASURE)
        switch = "on" if optimistic else "off"
        self.ctx.add_init_script(f"localStorage.setItem('mercyless.optimistic', '{switch}');")
        self.page = self.ctx.new_page()
        self.page.set_default_timeout(30_000)
        self.page.goto("/")
        self.page.evaluate(SEAT, [made["code"], made])
        self.page.goto(f"/r/{made['code']}")
        self.page.wait_for_selector(".lobby")
        self.page.select_option("#bot-level", "easy")
        self.page.get_by_role("button", name="Add bot").click()
        self.page.wait_for_function("() => document.querySelectorAll('.seatlist .seat').length >= 2")
        self.page.get_by_role("button", name="Start the game").click()
        self.page.wait_for_selector(".table .hand-card")
        cdp = self.ctx.new_cdp_session(self.page)
        if rate is None:
            self.cpu = slow_to_mid_phone(self.page, cdp)
        else:
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
            self.cpu = {"rate": rate, "readings": [(rate, benchmark_index(self.page))]}

    def tap(self) -> dict:
        """One measured tap (a new round first when the last is over)."""
        page = self.page
        page.wait_for_function(f"() => ({READY})() || {OVER}")
        if page.evaluate("() => document.body.dataset.status") != "playing":
            page.locator("button[data-key=rematch]").click()
            page.wait_for_function(READY)
        x, y = page.evaluate(CARD_AT)
        page.wait_for_function(READY)  # scrolled into view: still again
        count = page.evaluate("() => window.__taps.length")
        page.touchscreen.tap(x, y)
        page.wait_for_function(MEASURED, arg=count)
        return page.evaluate("n => window.__taps[n]", count)


def percentile(values: list[float], q: float) -> float:
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))]


def summary(values: list[float]) -> str:
    return (f"median {statistics.median(values):6.1f}  p90 {percentile(values, 0.9):6.1f}  "
            f"p95 {percentile(values, 0.95):6.1f}  max {max(values):6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taps", type=int, default=40, help="measured taps per mode")
    parser.add_argument("--rate", type=float, default=None,
                        help="a fixed CPU slow-down (e.g. 4) instead of the mid-tier calibration")
    parser.add_argument("--bot-delay-ms", type=int, default=300, help="the bot's pause before it plays")
    args = parser.parse_args()
    proc, url = spawn_embedded(ROOT, {"BOT_DELAY_MS": str(args.bot_delay_ms)})
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            old = Phone(browser, url, optimistic=False, rate=args.rate)
            # the same slow-down for both: the second calibrated alone read another moment's load
            phones = [old, Phone(browser, url, optimistic=True, rate=old.cpu["rate"])]
            results: dict[str, list[dict]] = {p.name: [] for p in phones}
            started = time.monotonic()
            for _ in range(args.taps):
                for phone in phones:  # alternated: both see the machine's load of the moment
                    results[phone.name].append(phone.tap())
            elapsed = time.monotonic() - started
            browser.close()
    finally:
        _stop(proc)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip() or "?"
    print(f"bench.tap_latency: {args.taps} taps a mode, alternated, in {elapsed:.0f} s; phone 390x844, "
          f"touch; {head}, load {os.getloadavg()[0]:.1f}")
    readings = "; ".join(f"{r:g}x: {s:.0f}" for phone in phones for r, s in phone.cpu["readings"])
    print(f"  CPU slowed {old.cpu['rate']:g}x for both (BenchmarkIndex at each rate read: {readings}; "
          f"the mid tier reads 1000)")
    print("tap -> the card out of the hand, drawn (ms)")
    for name, taps in results.items():
        print(f"  {name:27} {summary([t['left'] for t in taps])}")
    print("tap -> the server's patch drawn (ms)")
    for name, taps in results.items():
        print(f"  {name:27} {summary([t['settled'] for t in taps])}")
    for name, taps in results.items():
        first = sum(1 for t in taps if t["leftFirst"])
        print(f"  {name}: the card left before the patch in {first} of {len(taps)} taps")


if __name__ == "__main__":
    main()
