// What a patch's events look like on the table (the movements themselves: motion.js): a played card
// flying to the pile, drawn cards from the deck (a taken stack pours), swapped and passed hands
// sliding between seats, counts bumping, knock-outs, UNO calls, the direction spinning, reaction
// bubbles, a roulette's revealed cards turned one by one.
import { cardFace, colorName, parse } from "../cards.js";
import { S, media, name, reducedMotion } from "../core.js";
import { h, replace } from "../dom.js";
import { t } from "../i18n.js";
import { arrive, flash, flipIn, travel } from "./motion.js";
import { T } from "./state.js";

// a class's CSS animation; one still playing is left to finish (taking the class off and reading
// offsetWidth to play it again from the start forced a layout of the page)
function restart(el, cls) {
  if (!el || reducedMotion() || el.classList.contains(cls)) return;
  el.classList.add(cls);
  el.addEventListener("animationend", () => el.classList.remove(cls), { once: true });
}

function bubble(el, text) {
  if (!el) return;
  const b = h("span.bubble", { "aria-hidden": "true" }, text);
  el.append(b);
  setTimeout(() => b.remove(), 2600);
}

/** Every place a patch's movements need, read at once (one layout), in the patch's own task: the
 * frame that starts the movements then only styles and paints (the two in one task were over
 * 100 ms on a slow phone). */
export function measureFx(fx, fresh = []) {
  if (!fx || fx.welcome) return null;
  const seats = new Map([...T.chips].map(([id, c]) => [id, c.li.getBoundingClientRect()]));
  seats.set(S.you, T.hand.getBoundingClientRect());
  const top = T.discard.firstElementChild;
  fresh = fresh.filter((btn) => btn.isConnected).slice(0, 30);
  return { seats, pile: T.pileBtn.getBoundingClientRect(), top, topRect: top?.getBoundingClientRect(), fresh,
    freshRects: fresh.map((btn) => btn.getBoundingClientRect()) };
}

/** The movements of a patch, from the places measureFx read (read now when not given). */
export function applyFx(fx, at = measureFx(fx)) {
  if (!fx || fx.welcome || !at) return;
  const { seats, pile, top, topRect, fresh, freshRects } = at;
  const seatRect = (id) => seats.get(id) || null;
  // a played card flies from its player to the pile
  if (fx.played) arrive(top, seatRect(fx.played.player), { turn: -20, to: topRect });
  // drawn cards fly from the deck: yours face up into the hand, others' face down to their seat
  let ownDraw = false;
  for (const ev of fx.draws || []) {
    if (ev.player === S.you) ownDraw = true;
    else travel(pile, seatRect(ev.player), { n: ev.count || 1, stagger: ev.kind === "took_stack" ? 40 : 80, counted: true });
  }
  if (fx.roulette && fx.roulette.player !== S.you) {
    travel(pile, seatRect(fx.roulette.player), { n: (fx.roulette.cards || []).length, codes: fx.roulette.cards, stagger: 140 });
  }
  if (fx.roulette?.player === S.you) ownDraw = true;
  // a swap or a pass of hands slides between the seats
  let from = null;
  for (const ev of fx.swaps || []) {
    travel(seatRect(ev.a), seatRect(ev.b), { n: 3 });
    travel(seatRect(ev.b), seatRect(ev.a), { n: 3 });
    if (ev.a === S.you) from = seatRect(ev.b);
    if (ev.b === S.you) from = seatRect(ev.a);
  }
  if (fx.passed) {
    const ids = (S.view.players || []).filter((p) => !p.eliminated).map((p) => p.id);
    const dir = S.view.game?.direction ?? 1;
    ids.forEach((id, i) => {
      const next = ids[(i + dir + ids.length) % ids.length];
      travel(seatRect(id), seatRect(next), { n: 2 });
      if (next === S.you) from = seatRect(id);
    });
  }
  // the new cards in the hand come from where they came: the deck, or the seat they were swapped from
  const source = ownDraw ? pile : from;
  freshRects.forEach((to, i) => arrive(fresh[i], source, { delay: Math.min(i, 15) * 35, scale: 0.7, to }));
  for (const id of fx.bump || []) {
    const c = T.chips.get(id);
    if (c) flash(c.count, "bump");
  }
  for (const id of fx.ko || []) flash(id === S.you ? T.hand : T.chips.get(id)?.li, "ko");
  for (const id of fx.uno || []) flash(id === S.you ? T.mine : T.chips.get(id)?.li, "uno");
  if (fx.reversed) restart(T.dirEl, "spin");
  if (fx.drawPile) flash(T.pileBtn, "bump");
  if (fx.stack) restart(T.stackBar, "bump");
  if (fx.roulette) showRoulette(fx.roulette);
  for (const r of fx.reactions || []) {
    const where = r.player === S.you ? T.mine : T.chips.get(r.player)?.li;
    bubble(where, t(`react.${r.reaction}`));
  }
}

function showRoulette(ev) {
  const cards = ev.cards || [];
  clearTimeout(T.revealTimer);
  // on a phone the opponents fill the top of the table: the cards show over the piles instead
  // (the player with a stack aimed at them still sees who holds what), and for less long. Their
  // place is read before the cards are added, while the page's layout is still clean
  const phone = media("(max-width: 600px)").matches;
  const center = phone ? T.discard.closest(".center") : null;
  const box = center?.getBoundingClientRect();
  const table = center && T.root.getBoundingClientRect();
  const place = center && {
    // the piles sit inside the seats' ring: measured from the table's own top (and, with seats
    // beside the piles, its left: the strip keeps to the piles' column)
    top: box.top - table.top - T.root.clientTop,
    height: center.offsetHeight,
    narrow: T.opponents.dataset.sides !== "0",
    left: box.left - table.left - T.root.clientLeft,
    width: box.width,
  };
  replace(T.reveal,
    h("p.reveal-title", t("reveal.title", { name: name(ev.player), color: colorName(ev.color), n: cards.length })),
    h("div.reveal-cards", cards.map((c) => {
      const el = cardFace(c, { size: "sm" });
      if (parse(c).color === ev.color) el.classList.add("hit");
      return el;
    })));
  T.reveal.className = `reveal rv-${ev.color[0]}`;
  if (place) {
    T.reveal.classList.add("on-center");
    T.reveal.style.setProperty("--reveal-top", `${Math.round(place.top)}px`);
    T.reveal.style.setProperty("--reveal-h", `${place.height}px`);
    if (place.narrow) {
      T.reveal.classList.add("narrow");
      T.reveal.style.setProperty("--reveal-left", `${Math.round(place.left)}px`);
      T.reveal.style.setProperty("--reveal-w", `${Math.round(place.width)}px`);
    }
  }
  T.reveal.hidden = false;
  flipIn([...T.reveal.querySelectorAll(".reveal-cards .card")]); // one by one
  const ms = phone ? 2200 : reducedMotion() ? 3500 : 2600 + Math.min(cards.length, 20) * 140;
  T.revealTimer = setTimeout(() => {
    if (T) T.reveal.hidden = true;
  }, ms);
}
