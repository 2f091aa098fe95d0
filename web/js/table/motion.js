// Cards that move, with the Web Animations API. The view is always drawn first and in full: an
// animation only changes how an element that is already in its place gets there (`arrive`), or
// sends stand-in cards across a layer above the table that takes no input (`travel`). Nothing
// waits for an animation; the next patch may cut one short. With prefers-reduced-motion every
// movement becomes a fade, and no stand-in travels.
import { cardBack, cardFace } from "../cards.js";
import { reducedMotion } from "../core.js";
import { h } from "../dom.js";

const MAX_FLYING = 24; // stand-ins in the air at once: a busy turn never piles up work
const EASE = "cubic-bezier(.2, .8, .2, 1)";

function mid(r) {
  return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
}

function layer() {
  let el = document.getElementById("fx-layer");
  if (!el) {
    el = h("div#fx-layer.fx-layer", { "aria-hidden": "true" });
    document.body.append(el);
  }
  return el;
}

/**
 * `el` (already where it belongs, at `to` when the caller read it with the others) comes in from
 * `from` (a DOMRect), or fades in.
 */
export function arrive(el, from, { duration = 380, delay = 0, scale = 0.6, turn = 0, to = null } = {}) {
  if (!el || !el.isConnected) return null;
  if (reducedMotion() || !from) {
    return el.animate([{ opacity: 0 }, { opacity: 1 }], { duration: 180, delay, fill: "backwards" });
  }
  const a = mid(from);
  const b = mid(to || el.getBoundingClientRect());
  return el.animate([
    { transform: `translate(${Math.round(a.x - b.x)}px, ${Math.round(a.y - b.y)}px) scale(${scale}) rotate(${turn}deg)`, opacity: 0.5 },
    { transform: "none", opacity: 1 },
  ], { duration, delay, easing: EASE, fill: "backwards" });
}

/**
 * `n` stand-in cards (faces of `codes`, else backs) travel from one rect to another, one after
 * the other (`stagger` ms apart), and vanish. Nothing with reduced motion. At most eight fly:
 * `counted` puts "+n" on the last of them (another player's draw: the cards stay face down,
 * the count is what the table may know).
 */
export function travel(from, to, { n = 1, codes = null, stagger = 70, duration = 420, counted = false } = {}) {
  if (!from || !to || reducedMotion()) return;
  const box = layer();
  const a = mid(from);
  const b = mid(to);
  const count = Math.min(n, 8);
  for (let i = 0; i < count; i++) {
    while (box.childElementCount >= MAX_FLYING) box.firstElementChild.remove();
    const el = codes?.[i] ? cardFace(codes[i], { size: "sm" }) : cardBack({ size: "sm" });
    el.classList.add("flying");
    if (counted && n > 1 && i === count - 1) el.append(h("span.fly-count", `+${n}`));
    el.style.left = `${Math.round(a.x)}px`;
    el.style.top = `${Math.round(a.y)}px`;
    box.append(el);
    const anim = el.animate([
      { transform: "translate(-50%, -50%) scale(.8)", opacity: 0.9 },
      { transform: `translate(calc(-50% + ${Math.round(b.x - a.x)}px), calc(-50% + ${Math.round(b.y - a.y)}px)) scale(.6)`, opacity: 0.3 },
    ], { duration, delay: i * stagger, easing: "ease-in-out", fill: "both" });
    const done = () => el.remove();
    anim.onfinish = done;
    anim.oncancel = done;
  }
}

/** A short effect on a seat: a knock-out (shake and grey) or an UNO call (a pulse). */
export function flash(el, kind) {
  if (!el || !el.isConnected) return null;
  if (reducedMotion()) return el.animate([{ opacity: 0.4 }, { opacity: 1 }], { duration: 300 });
  if (kind === "ko") {
    return el.animate([
      { transform: "none" }, { transform: "translateX(-6px) rotate(-1deg)", filter: "grayscale(1)" },
      { transform: "translateX(6px) rotate(1deg)" }, { transform: "translateX(-4px)" }, { transform: "none" },
    ], { duration: 650, easing: "ease-in-out" });
  }
  if (kind === "uno") {
    return el.animate([
      { transform: "none", boxShadow: "0 0 0 0 rgba(255, 182, 39, 0)" },
      { transform: "scale(1.08)", boxShadow: "0 0 0 10px rgba(255, 182, 39, .45)" },
      { transform: "none", boxShadow: "0 0 0 0 rgba(255, 182, 39, 0)" },
    ], { duration: 600, easing: "ease-out" });
  }
  return el.animate([{ transform: "scale(1.25)" }, { transform: "none" }], { duration: 320, easing: "ease-out" }); // a bump
}

/** A roulette's revealed cards turn over one by one. */
export function flipIn(cards, stagger = 140) {
  cards.forEach((el, i) => {
    if (reducedMotion()) el.animate([{ opacity: 0 }, { opacity: 1 }], { duration: 200, delay: i * 60, fill: "backwards" });
    else el.animate([{ transform: "rotateY(90deg) scale(.85)", opacity: 0.2 }, { transform: "none", opacity: 1 }],
      { duration: 260, delay: i * stagger, easing: "ease-out", fill: "backwards" });
  });
}
