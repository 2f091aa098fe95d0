"""The game's sounds (issue #44, 6): six short, balanced sounds (a card played, a draw, a stack
aimed at you, a roulette, UNO, your turn), one a patch; the switch on the first screen, remembered
into the room; and silence with the sound off.

The sounds are rendered offline (OfflineAudioContext) and measured; the page's AudioContext is
wrapped to count the notes it starts, and web/js/sound.js writes the names it plays into
``window.__mercylessSounds`` when a test has set that list."""

from __future__ import annotations

import copy
import json
import re
import time

import jsonpatch
from playwright.sync_api import expect

from .test_flows import seat_browser

SIX = ["play", "draw", "stack", "roulette", "uno", "turn"]
FIVES = {"r-5": 10, "y-5": 10, "g-5": 10, "b-5": 10}

MEASURE = """async () => {
  const m = await import('/js/sound.js');
  const rate = 44100;
  const out = {};
  for (const name of m.SOUND_NAMES) {
    const c = new OfflineAudioContext(1, Math.round(rate * 0.8), rate);
    m.synth(name, c);
    const data = (await c.startRendering()).getChannelData(0);
    let peak = 0;
    for (const x of data) peak = Math.max(peak, Math.abs(x));
    let first = -1, last = -1;
    data.forEach((x, i) => { if (Math.abs(x) > peak / 100) { if (first < 0) first = i; last = i; } });
    // the loudest 20 ms (RMS): how loud the sound is heard, whatever its waveform
    const win = Math.round(rate * 0.02);
    let loud = 0;
    for (let i = 0; i + win <= data.length; i += Math.round(win / 4)) {
      let sum = 0;
      for (let j = i; j < i + win; j++) sum += data[j] * data[j];
      loud = Math.max(loud, Math.sqrt(sum / win));
    }
    out[name] = {peak, loud, ms: (last - first) / rate * 1000};
  }
  return out;
}"""

AUDIO_SPY = """(() => {
  window.__mercylessSounds = [];
  window.__notes = 0;
  const AC = window.AudioContext;
  window.AudioContext = class extends AC {
    createOscillator() {
      const osc = super.createOscillator();
      const start = osc.start.bind(osc);
      osc.start = (...args) => { window.__notes += 1; return start(...args); };
      return osc;
    }
  };
})()"""


def test_the_six_sounds_are_short_and_balanced_and_the_turn_stands_out(pages, web_server):
    page = pages.new()
    page.goto("/")
    got = page.evaluate(MEASURE)
    assert set(SIX) <= set(got), got
    for name, m in got.items():
        assert 0 < m["ms"] < 400, (name, m)        # every sound, the extras too
    six = {name: got[name] for name in SIX}
    peaks = [m["peak"] for m in six.values()]
    assert max(peaks) / min(peaks) < 1.5, six     # their peaks alike
    others = [six[name]["loud"] for name in SIX if name != "turn"]
    assert max(others) / min(others) < 1.3, six   # heard about as loud
    assert six["turn"]["loud"] > 1.4 * max(others), six  # the turn, clearly louder


class ScriptedRoom:
    """The page's socket through the test. Until ``script()`` the real server's messages pass;
    then the test is the server: it sends patches made from the page's own view and answers the
    page's plays."""

    def __init__(self, page) -> None:
        self.page = page
        self.scripted = False
        self.plays: list[dict] = []
        self.to_page = None
        self.view: dict = {}
        self.version = 0
        self.you = ""
        page.route_web_socket(re.compile(r".*/ws/.*"), self._route)

    def _route(self, ws) -> None:
        server = ws.connect_to_server()
        self.to_page = ws

        def from_page(message: str | bytes) -> None:
            msg = json.loads(message)
            if not self.scripted:
                server.send(message)
            elif msg.get("type") == "play":
                self.plays.append(msg)
            elif msg.get("type") == "ping":
                ws.send('{"type": "pong"}')

        ws.on_message(from_page)
        server.on_message(lambda message: None if self.scripted else ws.send(message))

    def script(self) -> None:
        self.scripted = True
        state = self.page.evaluate("""async () => {
          const {S} = await import('/js/core.js');
          return {view: S.sock.view, version: S.sock.version, you: S.you};
        }""")
        self.view, self.version, self.you = state["view"], state["version"], state["you"]

    def other(self) -> str:
        return next(p["id"] for p in self.view["players"] if p["id"] != self.you)

    def patch(self, events: list[dict], change) -> None:
        """Send the page a patch: ``change`` edits a copy of its view, ``events`` come with it."""
        new = copy.deepcopy(self.view)
        change(new)
        ops = jsonpatch.make_patch(self.view, new).patch
        self.view = new
        self.version += 1
        now = int(time.time() * 1000)
        self.to_page.send(json.dumps({"type": "patch", "version": self.version, "now": now, "ops": ops,
                                      "events": events}))
        self.page.wait_for_function("v => Number(document.body.dataset.version) === v", arg=self.version)

    def wait_play(self) -> dict:
        deadline = time.monotonic() + 10
        while not self.plays and time.monotonic() < deadline:
            self.page.evaluate("0")  # the proxy's handlers run while the page is asked something
        assert self.plays, "the page sent no play"
        return self.plays.pop()


NOTHING = {"play": [], "draw": False, "pass": False, "choose": [], "cancel": False, "uno": False, "catch": []}


def _turn(view: dict, who: str, **legal) -> None:
    view["game"]["turn"] = who
    view["game"]["legal"] = {**NOTHING, **legal}


def _sounds(page) -> list[str]:
    return page.evaluate("() => window.__mercylessSounds.splice(0)")


def test_the_first_screens_switch_is_remembered_and_each_event_sounds_once(pages, web_server):
    # fives only: Ann's first playable card asks nothing (a wild would ask a colour first)
    made = web_server.create("Ann", rules={"turn_timer_s": 0, "deck": FIVES})
    web_server.join(made["code"], "Bob")  # seated, never connects: only the script moves
    page = pages.new(phone=True, viewport={"width": 390, "height": 844})
    page.add_init_script(AUDIO_SPY)
    # the first screen: one switch that says what it is, off until turned on
    page.goto("/")
    switch = page.get_by_role("switch", name="Game sounds")
    expect(switch).to_be_visible()
    assert switch.bounding_box()["y"] + switch.bounding_box()["height"] <= 844  # no scrolling to it
    expect(switch).to_have_attribute("aria-checked", "false")
    switch.tap()
    expect(switch).to_have_attribute("aria-checked", "true")
    expect(switch).to_contain_text("On")
    expect(page.locator("button.sound")).to_have_attribute("aria-pressed", "true")  # the bar's follows
    assert _sounds(page) == ["turn"]  # what the turn sounds like
    switch.tap()                      # and off again: silently
    expect(switch).to_have_attribute("aria-checked", "false")
    expect(page.locator("button.sound")).to_have_attribute("aria-pressed", "false")
    assert page.evaluate("() => localStorage.getItem('mercyless.sound')") == "off"
    assert _sounds(page) == []
    switch.tap()
    expect(switch).to_have_attribute("aria-checked", "true")
    assert _sounds(page) == ["turn"]
    # remembered into the room (a new page load)
    net = ScriptedRoom(page)
    seat_browser(page, web_server, made["code"], made)
    expect(page.locator("button.sound")).to_have_attribute("aria-pressed", "true")
    page.get_by_role("button", name="Start the game").click()
    expect(page.locator(".table")).to_have_attribute("data-turn", "me")
    _sounds(page)
    net.script()
    you, bob = net.you, net.other()
    me = next(i for i, p in enumerate(net.view["players"]) if p["id"] == you)
    # Ann plays: heard at the tap; the server's patch that settles it adds nothing
    card = page.locator(".hand .hand-card.playable").first
    code = card.get_attribute("data-card")
    card.tap()
    play = net.wait_play()

    def played(v):
        v["hand"].remove(code)
        v["players"][me]["cards"] -= 1
        v["game"]["top"] = code
        _turn(v, bob)
    net.patch([{"kind": "played", "player": you, "card": code}], played)
    net.to_page.send(json.dumps({"type": "ack", "id": play["id"]}))
    assert _sounds(page) == ["play"]

    # Bob aims a stack at Ann: her turn too, but one sound, the stack's
    def stacked(v):
        v["game"]["top"] = "r-draw2"
        v["game"]["stack"] = {"total": 2, "last": 2, "target": you}
        _turn(v, you, draw=True)
    net.patch([{"kind": "played", "player": bob, "card": "r-draw2"}], stacked)
    assert _sounds(page) == ["stack"]

    def took(v):
        v["game"]["stack"] = None
        v["hand"] += ["g-3", "b-4"]
        v["players"][me]["cards"] += 2
        _turn(v, bob)
    net.patch([{"kind": "took_stack", "player": you, "count": 2, "cards": ["g-3", "b-4"]}], took)
    assert _sounds(page) == ["draw"]

    def roulette(v):
        v["game"]["top"] = "w-roulette"
        v["game"]["color"] = "green"
    spun = {"kind": "roulette", "player": you, "by": bob, "color": "green", "cards": ["r-1", "g-2"]}
    net.patch([{"kind": "played", "player": bob, "card": "w-roulette"}, spun], roulette)
    assert _sounds(page) == ["roulette"]

    net.patch([{"kind": "uno", "player": bob}], lambda v: v["players"][1 - me].update(uno=True))
    assert _sounds(page) == ["uno"]

    def bob_plays(v):
        v["game"]["top"] = "g-9"
        _turn(v, you, draw=True)
    net.patch([{"kind": "played", "player": bob, "card": "g-9"}], bob_plays)
    assert _sounds(page) == ["turn"]
    notes = page.evaluate("() => window.__notes")
    assert notes > 0

    # turned off in the room: nothing plays, whatever happens
    page.locator("button.sound").click()
    expect(page.locator("button.sound")).to_have_attribute("aria-pressed", "false")
    net.patch([{"kind": "played", "player": you, "card": "g-3"}], lambda v: _turn(v, bob))
    net.patch([{"kind": "played", "player": bob, "card": "r-draw2"}], stacked)
    assert _sounds(page) == []
    assert page.evaluate("() => window.__notes") == notes
    net.scripted = False
    page.reload()
    expect(page.get_by_role("button", name="Sound off")).to_have_attribute("aria-pressed", "false")
