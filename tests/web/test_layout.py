"""Layout checks measured in the page: rule choices read in full."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .test_flows import seat_browser

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

# Every rule <select> in the lobby: is the chosen option's whole text on screen? A select draws its
# text on one line and cuts what does not fit, so a visible select must hold the text in its content
# box; a transparent select must lie over an element that shows exactly that text, unclipped.
RULE_CHOICES_JS = """() => {
  const problems = [];
  const vw = document.documentElement.clientWidth;
  for (const sel of document.querySelectorAll('.rulegrid select')) {
    const label = sel.selectedOptions[0] ? sel.selectedOptions[0].text : '';
    const cs = getComputedStyle(sel);
    let box;
    if (Number(cs.opacity) > 0.05) {
      const probe = document.createElement('span');
      probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
      probe.style.font = cs.font;
      probe.style.letterSpacing = cs.letterSpacing;
      probe.textContent = label;
      document.body.append(probe);
      const need = probe.getBoundingClientRect().width;
      probe.remove();
      const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      if (need > room + 0.5) {
        problems.push(`${sel.id}: "${label}" needs ${need.toFixed(0)}px, has ${room.toFixed(0)}px`);
      }
      box = sel.getBoundingClientRect();
    } else {
      const shown = [...sel.parentElement.children].find((el) => el !== sel
        && Number(getComputedStyle(el).opacity) > 0.05 && el.textContent.trim());
      if (!shown || shown.textContent.trim() !== label.trim()) {
        problems.push(`${sel.id}: shows "${shown ? shown.textContent : ''}" for "${label}"`);
        continue;
      }
      if (shown.scrollWidth > shown.clientWidth + 1 || shown.scrollHeight > shown.clientHeight + 1) {
        problems.push(`${sel.id}: "${label}" is clipped`);
      }
      box = shown.getBoundingClientRect();
      const s = sel.getBoundingClientRect();  // a click or tap on the text must reach the select
      if (s.left > box.left + 1 || s.right < box.right - 1
          || s.top > box.top + 1 || s.bottom < box.bottom - 1) {
        problems.push(`${sel.id}: the select does not cover its text`);
      }
    }
    if (box.left < 0 || box.right > vw) problems.push(`${sel.id}: outside the viewport`);
  }
  return problems;
}"""


@pytest.mark.parametrize("locale", ["en-US", "nl-NL"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_rule_choice_reads_in_full(pages, web_server, locale, viewport):
    made = web_server.create("Ann")
    phone = viewport is PHONE
    page = pages.new(locale=locale, phone=phone, viewport=viewport)
    seat_browser(page, web_server, made["code"], made)
    page.wait_for_selector(".lobby .rulegrid select")
    selects = page.locator(".rulegrid select")
    assert selects.count() >= 8
    seen = 0
    for i in range(selects.count()):
        sel = selects.nth(i)
        for value in sel.evaluate("s => [...s.options].map((o) => o.value)"):
            before = page.evaluate("() => Number(document.body.dataset.version)")
            changed = sel.input_value() != value
            sel.select_option(value)
            if changed:  # the server's answer has come back and been drawn
                page.wait_for_function("v => Number(document.body.dataset.version) > v", arg=before)
            expect(sel).to_have_value(value)
            assert page.evaluate(RULE_CHOICES_JS) == [], (locale, viewport, value)
            seen += 1
    assert seen >= 20
    width = page.evaluate("() => document.scrollingElement.scrollWidth")
    assert width <= viewport["width"]
