// What a patch's events look like on the table: a played card flying in, counts bumping, knock-outs,
// swirled hands, the direction spinning, reaction bubbles, a roulette's revealed cards.
import { cardFace, colorName, parse } from "../cards.js";
import { S, name, reducedMotion } from "../core.js";
import { h, replace } from "../dom.js";
import { t } from "../i18n.js";
import { T } from "./state.js";

function restart(el, cls) {
  if (!el || reducedMotion()) return;
  el.classList.remove(cls);
  void el.offsetWidth;
  el.classList.add(cls);
  el.addEventListener("animationend", () => el.classList.remove(cls), { once: true });
}

function bubble(el, text) {
  if (!el) return;
  const b = h("span.bubble", { "aria-hidden": "true" }, text);
  el.append(b);
  setTimeout(() => b.remove(), 2600);
}

export function applyFx(fx) {
  if (!fx || fx.welcome) return;
  if (fx.played) {
    const card = T.discard.firstElementChild;
    if (card && !reducedMotion()) {
      const to = T.discard.getBoundingClientRect();
      let from = null;
      if (fx.played.player === S.you) from = T.hand.getBoundingClientRect();
      else from = T.chips.get(fx.played.player)?.li.getBoundingClientRect();
      if (from) {
        card.style.setProperty("--from-x", `${Math.round(from.left + from.width / 2 - (to.left + to.width / 2))}px`);
        card.style.setProperty("--from-y", `${Math.round(from.top + from.height / 2 - (to.top + to.height / 2))}px`);
      }
      restart(card, "fly");
    }
  }
  for (const id of fx.bump || []) {
    const c = T.chips.get(id);
    if (c) restart(c.count, "bump");
  }
  for (const id of fx.ko || []) {
    const c = T.chips.get(id);
    if (c) restart(c.li, "ko");
    if (id === S.you) restart(T.hand, "ko");
  }
  if (fx.swirl) {
    restart(T.hand, "swirl");
    for (const c of T.chips.values()) restart(c.li, "swirl");
  }
  if (fx.reversed) restart(T.dirEl, "spin");
  if (fx.drawPile) restart(T.pileBtn, "bump");
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
  replace(T.reveal,
    h("p.reveal-title", t("reveal.title", { name: name(ev.player), color: colorName(ev.color), n: cards.length })),
    h("div.reveal-cards", cards.map((c, i) => {
      const el = cardFace(c, { size: "sm" });
      el.style.setProperty("--i", String(i));
      if (parse(c).color === ev.color) el.classList.add("hit");
      return el;
    })));
  T.reveal.className = `reveal rv-${ev.color[0]}`;
  // on a phone the opponents fill the top of the table: the cards show over the piles instead
  // (the player with a stack aimed at them still sees who holds what), and for less long
  const phone = matchMedia("(max-width: 600px)").matches;
  const center = T.discard.closest(".center");
  if (phone && center) {
    T.reveal.classList.add("on-center");
    // the piles sit inside the seats' ring: measured from the table's own top
    const top = center.getBoundingClientRect().top - T.root.getBoundingClientRect().top - T.root.clientTop;
    T.reveal.style.setProperty("--reveal-top", `${Math.round(top)}px`);
    T.reveal.style.setProperty("--reveal-h", `${center.offsetHeight}px`);
  }
  T.reveal.hidden = false;
  const ms = phone ? 2200 : reducedMotion() ? 3500 : 2600 + Math.min(cards.length, 20) * 140;
  T.revealTimer = setTimeout(() => {
    if (T) T.reveal.hidden = true;
  }, ms);
}
