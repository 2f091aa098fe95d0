// Card help on any card (a hand's, the pile's, the log's, the big screen's): hovered with a mouse,
// held on a touch screen (the tap that ends a long press plays nothing), or ? on a focused card
// (Escape closes). One tooltip for the page, placed by the card; the room's rules come from
// whoever shows cards (setHelpRules).
import { h, replace } from "../dom.js";
import { cardHelp } from "./cards-help.js";

const HOVER_MS = 450;
const PRESS_MS = 450;
const SLOP_PX = 10;

let rulesNow = () => ({});
let tip = null;
let anchor = null;
let hoverTimer = 0;
let pressTimer = 0;
let pressAt = null;
let swallowClick = false;

/** `getter()` gives the rules of the room on screen (a view's `room.rules`). */
export function setHelpRules(getter) {
  rulesNow = getter;
}

function cardOf(el) {
  return el instanceof Element ? el.closest(".card[data-card]") : null;
}

function tipEl() {
  if (!tip || !tip.isConnected) {
    tip = h("div#card-tip.card-tip", { role: "tooltip", hidden: true });
    document.body.append(tip);
  }
  return tip;
}

export function showHelp(cardEl) {
  const code = cardEl?.dataset.card;
  // a card a patch took away before its hover's wait ended: no help, which would show at the
  // page's corner (a removed card has no place) and stay (no pointer leaves a removed card)
  if (!code || !cardEl.isConnected) return;
  const help = cardHelp(code, rulesNow() || {});
  const el = tipEl();
  replace(el, h("p.tip-title", help.title), h("ul.tip-lines", help.lines.map((line) => h("li", line))));
  el.dataset.card = code;
  el.hidden = false;
  if (anchor && anchor !== cardEl) anchor.removeAttribute("aria-describedby");
  anchor = cardEl;
  cardEl.setAttribute("aria-describedby", "card-tip");
  place(el, cardEl.getBoundingClientRect());
}

function place(el, r) {
  const w = Math.min(320, window.innerWidth - 16);
  el.style.width = `${w}px`;
  el.style.left = `${Math.round(Math.max(8, Math.min(window.innerWidth - w - 8, r.left + r.width / 2 - w / 2)))}px`;
  const th = el.offsetHeight;
  const above = r.top - th - 8;
  const below = Math.min(window.innerHeight - th - 8, r.bottom + 8);
  el.style.top = `${Math.round(above >= 8 ? above : Math.max(8, below))}px`;
}

export function hideHelp() {
  clearTimeout(hoverTimer);
  if (tip) tip.hidden = true;
  anchor?.removeAttribute("aria-describedby");
  anchor = null;
}

function cancelPress() {
  clearTimeout(pressTimer);
  pressTimer = 0;
  pressAt = null;
}

let installed = false;

/** Listens on the document once: every card on every screen has help. */
export function installCardHelp() {
  if (installed) return;
  installed = true;
  document.addEventListener("pointerover", (e) => {
    if (e.pointerType !== "mouse") return;
    if (anchor && !anchor.isConnected) hideHelp(); // its card was played or replaced meanwhile
    const card = cardOf(e.target);
    if (!card || card === anchor) return;
    clearTimeout(hoverTimer);
    hoverTimer = setTimeout(() => showHelp(card), HOVER_MS);
  });
  document.addEventListener("pointerout", (e) => {
    if (e.pointerType !== "mouse") return;
    const card = cardOf(e.target);
    if (!card || card.contains(e.relatedTarget)) return;
    clearTimeout(hoverTimer);
    if (card === anchor) hideHelp();
  });
  document.addEventListener("pointerdown", (e) => {
    if (e.pointerType === "mouse") { // a click acts: the help waiting to show, or shown, goes
      hideHelp();
      return;
    }
    swallowClick = false;
    const card = cardOf(e.target);
    if (anchor && card !== anchor) hideHelp();
    cancelPress();
    if (!card) return;
    pressAt = { x: e.clientX, y: e.clientY };
    pressTimer = setTimeout(() => {
      pressTimer = 0;
      swallowClick = true;
      showHelp(card);
      navigator.vibrate?.(15);
    }, PRESS_MS);
  }, { passive: true });
  document.addEventListener("pointermove", (e) => {
    if (pressAt && Math.hypot(e.clientX - pressAt.x, e.clientY - pressAt.y) > SLOP_PX) cancelPress();
  }, { passive: true });
  for (const kind of ["pointerup", "pointercancel"]) document.addEventListener(kind, cancelPress, { passive: true });
  // the click that ends a long press does not play the card
  document.addEventListener("click", (e) => {
    if (!swallowClick) return;
    swallowClick = false;
    e.preventDefault();
    e.stopPropagation();
  }, true);
  document.addEventListener("contextmenu", (e) => {
    if (cardOf(e.target)) e.preventDefault(); // a long press on a phone: the help, not a menu
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && anchor) {
      hideHelp();
      return;
    }
    if (e.key !== "?" || e.ctrlKey || e.metaKey || e.altKey) return;
    const card = cardOf(document.activeElement);
    if (!card) return;
    e.preventDefault();
    e.stopPropagation();
    if (anchor === card) hideHelp();
    else showHelp(card);
  }, true);
  document.addEventListener("focusout", (e) => {
    if (anchor && e.target === anchor) hideHelp();
  });
  window.addEventListener("scroll", () => {
    if (anchor) hideHelp();
  }, { passive: true, capture: true });
}
