"""Card faces are SVG images drawn once per card (web/js/card-art.js): every face shows its image,
with or without the browser's constructed style sheets, under the page's CSP, and tells where its
top-left corner lies (which names the card by itself in an overlapped hand)."""

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
        assert f["image"].startswith('url("data:image/svg+xml'), f
        assert f["own"] is (not sheets), f
    for f in hand:  # the top-left corner, inside the card's top-left quarter
        left, top, right, bottom = map(float, f["corner"].split())
        assert 0 < left < right < 0.5 and 0 < top < bottom < 0.5, f
    # the images drew (a CSP that refused them would leave the faces bare: the pages fixture
    # fails a test on any console error, a CSP violation included)
    assert page.evaluate("""() => [...document.querySelectorAll('.hand .face')].every((f) =>
        f.getBoundingClientRect().width > 0)""")
