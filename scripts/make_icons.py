"""Draws the app's icons (web/icons/*.png) from web/favicon.svg with the Chromium the browser tests
use (Playwright's screenshot), so no image library is needed at run time or here. Run it after
changing the favicon and commit the PNGs:

    .venv/bin/python scripts/make_icons.py

``icon-*`` ("any"): the cards on a dark rounded tile, transparent corners. ``maskable-512``: a
full-bleed tile with the cards inside the central circle a launcher's mask always keeps (80 % of
the width). ``apple-touch-icon``: full-bleed, iOS rounds the corners itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "web"
TILE = "#141726"  # the manifest's theme_color

#: name -> (size in px, tile corner radius as a share of the size, drawing's share of the size)
ICONS = {
    "icon-192.png": (192, 0.22, 0.84),
    "icon-512.png": (512, 0.22, 0.84),
    "maskable-512.png": (512, 0.0, 0.56),
    "apple-touch-icon.png": (180, 0.0, 0.76),
}


#: The favicon's own box cuts the tilted red card's corner off, and its cards lean right: the icons
#: draw all of it, centred (a square box around the drawing's real extent, transforms included).
FIT_DRAWING = """() => {
  const svg = document.querySelector('svg');
  const g = document.createElementNS('http://www.w3.org/2000/svg', 'g');
  g.append(...svg.childNodes);
  svg.append(g);
  const b = g.getBBox();
  const side = Math.max(b.width, b.height) + 4; // + the red card's outline (the box leaves strokes out)
  const x = b.x + b.width / 2 - side / 2;
  const y = b.y + b.height / 2 - side / 2;
  svg.setAttribute('viewBox', `${x} ${y} ${side} ${side}`);
}"""


def page_for(svg: str, size: int, radius: float, share: float) -> str:
    drawing = round(size * share)
    sized = svg.replace("<svg ", '<svg width="100%" height="100%" ', 1)
    return (f"<!doctype html><html><body style='margin:0;background:transparent'>"
            f"<div style='width:{size}px;height:{size}px;background:{TILE};border-radius:{radius * size}px;"
            f"display:grid;place-items:center'>"
            f"<div style='width:{drawing}px;height:{drawing}px'>{sized}</div>"
            f"</div></body></html>")


def main() -> None:
    svg = (WEB / "favicon.svg").read_text(encoding="utf-8")
    out = WEB / "icons"
    out.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                     args=["--no-sandbox", "--disable-gpu"])
        for name, (size, radius, share) in ICONS.items():
            page = browser.new_page(viewport={"width": size, "height": size}, device_scale_factor=1)
            page.set_content(page_for(svg, size, radius, share))
            page.evaluate(FIT_DRAWING)
            page.screenshot(path=str(out / name), omit_background=True)
            page.close()
            print(out / name)
        browser.close()


if __name__ == "__main__":
    main()
