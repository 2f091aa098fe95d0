"""Card faces are SVG images drawn once per card (web/js/card-art.js): every face shows its image,
with or without the browser's constructed style sheets, under the page's CSP, and tells where its
top-left corner lies (which names the card by itself in an overlapped hand). With the sheets, each
image is then drawn once into a bitmap as wide as the largest card shows it on this screen."""

from __future__ import annotations

import pytest

from .test_flows import seat_browser
from .ui import start_against_a_bot

# every face on the page: its image and the corner it declares
FACES_JS = """() => [...document.querySelectorAll('.card:not(.back)')].map((card) => {
  const face = card.querySelector(':scope > .face');
  return {card: card.dataset.card, children: face ? face.children.length : -1,
          image: face ? getComputedStyle(face).borderImageSource : 'none',
          own: face ? face.style.borderImage !== '' : false,
          corner: card.dataset.corner || null, xs: card.classList.contains('card-xs')};
})"""

ALL_BITMAPS_JS = """() => [...document.querySelectorAll('.card:not(.back) > .face')].every((f) =>
    getComputedStyle(f).borderImageSource.startsWith('url("data:image/png'))"""

# the pixel widths of the faces' bitmaps, full faces and the log's small ones
BITMAP_WIDTHS_JS = """async () => {
  const out = {full: [], xs: []};
  for (const card of document.querySelectorAll('.card:not(.back)')) {
    const img = new Image();
    img.src = getComputedStyle(card.querySelector(':scope > .face')).borderImageSource.slice(5, -2);
    await img.decode();
    out[card.classList.contains('card-xs') ? 'xs' : 'full'].push(img.naturalWidth);
  }
  return out;
}"""

# one of each kind a hand can show, in every colour, and the wilds
DECK = {**{f"{c}-{k}": 1 for c in "rygb" for k in ("0", "7", "skip", "skipall", "reverse", "discard",
                                                   "draw2", "draw4")},
        "w-draw6": 1, "w-draw10": 1, "w-reverse4": 1, "w-roulette": 1, "w-wild": 1}


@pytest.mark.parametrize("sheets", [True, False])
def test_every_face_shows_its_image_and_its_corner(pages, web_server, sheets):
    made = web_server.create("Ann", rules={"deck": DECK, "hand_size": 12, "turn_timer_s": 0})
    page = pages.new(viewport={"width": 1280, "height": 800})
    if not sheets:  # Safari before 16.4: each face's own style instead of a shared rule
        page.add_init_script("delete Document.prototype.adoptedStyleSheets")
    seat_browser(page, web_server, made["code"], made)
    start_against_a_bot(page)
    faces = page.evaluate(FACES_JS)
    hand = [f for f in faces if not f["xs"]]
    assert len(hand) >= 13, faces  # the hand and the pile's top
    for f in faces:
        assert f["children"] == 0, f  # one element: the drawing is the image
        assert f["image"].startswith(('url("data:image/svg+xml', 'url("data:image/png') if sheets
                                     else 'url("data:image/svg+xml'), f
        assert f["own"] is (not sheets), f
    for f in hand:  # the top-left corner, inside the card's top-left quarter
        left, top, right, bottom = map(float, f["corner"].split())
        assert 0 < left < right < 0.5 and 0 < top < bottom < 0.5, f
    if sheets:  # each face becomes a bitmap, as sharp as the widest card (style.css --card-art-w)
        page.wait_for_function(ALL_BITMAPS_JS)
        widths = page.evaluate(BITMAP_WIDTHS_JS)
        assert set(widths["full"]) == {89} and set(widths["xs"]) <= {33}, widths  # 100 px and 36 px x 0.89
    # the images drew (a CSP that refused them would leave the faces bare: the pages fixture
    # fails a test on any console error, a CSP violation included)
    assert page.evaluate("""() => [...document.querySelectorAll('.hand .face')].every((f) =>
        f.getBoundingClientRect().width > 0)""")


def test_face_bitmaps_follow_the_screen_and_the_card_size(pages, web_server):
    """A phone's 3x screen gets bitmaps three times as wide as its largest card (72 px there); a
    page that becomes wider than a phone's gets them drawn again for its larger cards."""
    made = web_server.create("Ann", rules={"deck": DECK, "hand_size": 7, "turn_timer_s": 0})
    page = pages.new(viewport={"width": 390, "height": 844}, device_scale_factor=3)
    seat_browser(page, web_server, made["code"], made)
    start_against_a_bot(page)
    page.wait_for_function(ALL_BITMAPS_JS)
    assert set(page.evaluate(BITMAP_WIDTHS_JS)["full"]) == {193}, "72 x 3 x 0.89, rounded up"
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_function("""() => [...document.querySelectorAll('.hand .face')].every((f) => {
        const img = new Image();
        img.src = getComputedStyle(f).borderImageSource.slice(5, -2);
        return img.complete && img.naturalWidth === 267;
    })""")  # 100 x 3 x 0.89, rounded up
