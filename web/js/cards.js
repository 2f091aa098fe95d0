// Card codes (rules.md "Cards"): "r-7", "g-draw2", "w-draw6". Faces are SVG images (card-art.js)
// over a CSS colour and pattern; every face carries its colour letter and its symbol, so colour is
// never the only cue.
import { faceArt, faceSvg, idle } from "./card-art.js";
import { h } from "./dom.js";
import { lang, t } from "./i18n.js";

export const COLORS = ["red", "yellow", "green", "blue"];
export const LETTER = { r: "red", y: "yellow", g: "green", b: "blue", w: "wild" };
// the hand's order of kinds (and the deck editor's): a kind not listed goes last
export const KIND_ORDER = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "skip", "skipall", "reverse",
  "discard", "draw2", "draw4", "roulette", "wild", "reverse4", "draw6", "draw10"];
const COLOR_ORDER = ["r", "y", "g", "b", "w"];

export function parse(code) {
  const [c, kind] = String(code).split("-");
  return { c, color: LETTER[c] || "wild", kind, number: /^\d$/.test(kind) ? Number(kind) : null,
    wild: c === "w" };
}

export function sortHand(hand) {
  const key = (code) => {
    const p = parse(code);
    return COLOR_ORDER.indexOf(p.c) * 100 + KIND_ORDER.indexOf(p.kind);
  };
  return [...hand].sort((a, b) => key(a) - key(b));
}

export function colorName(color) {
  return t(`color.${color}`);
}

/** "Red 7", "Wild Draw 6": the accessible name of a card. */
export function cardName(code) {
  const p = parse(code);
  if (p.wild) return t(`kind.${p.kind}`);
  const what = p.number !== null ? String(p.number) : t(`kind.${p.kind}`);
  return `${colorName(p.color)} ${what}`;
}

export function cardList(codes) {
  return codes.map(cardName).join(", ");
}

const ICONS = {
  skip: '<svg viewBox="0 0 24 24"><circle cx="12" cy="12" r="8.5" fill="none" stroke="currentColor" stroke-width="3"/><path d="M6 18 18 6" stroke="currentColor" stroke-width="3"/></svg>',
  skipall: '<svg viewBox="0 0 24 24"><circle cx="12" cy="12" r="6" fill="none" stroke="currentColor" stroke-width="2.6"/><path d="M8 16 16 8" stroke="currentColor" stroke-width="2.6"/><g fill="currentColor"><circle cx="12" cy="1.8" r="1.8"/><circle cx="12" cy="22.2" r="1.8"/><circle cx="1.8" cy="12" r="1.8"/><circle cx="22.2" cy="12" r="1.8"/></g></svg>',
  reverse: '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.6" stroke-linecap="round" stroke-linejoin="round"><path d="M4 8h14"/><path d="M14 4l4 4-4 4"/><path d="M20 16H6"/><path d="M10 12l-4 4 4 4"/></svg>',
  discard: '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round"><rect x="3" y="6" width="9" height="13" rx="1.5" fill="currentColor" fill-opacity=".25"/><rect x="7.5" y="4.5" width="9" height="13" rx="1.5" fill="currentColor" fill-opacity=".45"/><rect x="12" y="3" width="9" height="13" rx="1.5" fill="currentColor" fill-opacity=".7"/></svg>',
  roulette: '<svg viewBox="0 0 24 24"><path d="M12 12V2a10 10 0 0 1 10 10z" fill="var(--red)"/><path d="M12 12h10a10 10 0 0 1-10 10z" fill="var(--yellow)"/><path d="M12 12v10A10 10 0 0 1 2 12z" fill="var(--green)"/><path d="M12 12H2A10 10 0 0 1 12 2z" fill="var(--blue)"/><circle cx="12" cy="12" r="10" fill="none" stroke="#fff" stroke-width="1.5"/><circle cx="12" cy="12" r="2.4" fill="#fff"/></svg>',
  wild: '<svg viewBox="0 0 24 24"><path d="M12 12V2a10 10 0 0 1 10 10z" fill="var(--red)"/><path d="M12 12h10a10 10 0 0 1-10 10z" fill="var(--yellow)"/><path d="M12 12v10A10 10 0 0 1 2 12z" fill="var(--green)"/><path d="M12 12H2A10 10 0 0 1 12 2z" fill="var(--blue)"/></svg>',
};

/** The big centre symbol and the small corner mark of a card. */
function symbols(p) {
  if (p.number !== null) return { big: String(p.number), corner: String(p.number) };
  switch (p.kind) {
    case "draw2": return { big: "+2", corner: "+2" };
    case "draw4": return { big: "+4", corner: "+4" };
    case "draw6": return { big: "+6", corner: "+6" };
    case "draw10": return { big: "+10", corner: "+10" };
    case "reverse4": return { icon: "reverse", big: "+4", corner: "+4" };
    case "roulette": return { icon: "roulette", corner: "?" };
    case "wild": return { icon: "wild", corner: "W" };
    default: return { icon: p.kind, corner: null };
  }
}

/**
 * A card face. opts.tag "button" makes it a control; opts.size "sm"/"xs" for compact faces.
 * The face is aria-hidden; the element itself carries the accessible name.
 */
export function cardFace(code, opts = {}) {
  // -- speed: each face is built once per card, options and language, then cloned: twelve cards
  // taken at once were some 150 elements made one by one in script on a slow phone
  const key = `${code}|${opts.tag || ""}|${opts.size || ""}|${opts.class || ""}|${lang()}`;
  let face = built.get(key);
  if (!face) {
    warm();
    face = buildFace(code, opts);
    built.set(key, face);
  }
  return face.cloneNode(true);
}

const built = new Map();

// The face is one element showing its drawing as an image (card-art.js); the colour, its pattern
// and the colour-blind theme's shapes stay CSS (style.css, theme.css).
function buildFace(code, opts) {
  const p = parse(code);
  const el = h(opts.tag || "span", {
    class: `card c-${p.c} k-${p.kind}${opts.size ? ` card-${opts.size}` : ""}${opts.class ? ` ${opts.class}` : ""}`,
    "data-card": code,
  });
  if (!opts.tag || opts.tag === "span") {
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", cardName(code));
  }
  const art = artOf(code, opts.size === "xs" ? "xs" : "full", true);
  // where its top-left corner lies (fractions of the card's box): an overlapped hand keeps it in view
  if (art.corner) el.dataset.corner = art.corner.join(" ");
  const face = h("span.face", { class: art.cls, "aria-hidden": "true" });
  if (art.image) face.style.borderImage = art.image;
  el.append(face);
  return el;
}

function artOf(code, cut, shown = false) {
  const p = parse(code);
  const letter = t(`letter.${p.c}`);
  return faceArt(`${code}|${cut}|${letter}`, () => faceSvg(p, symbols(p), letter, cut, ICONS), shown);
}

const warmed = new Set();

// -- speed: every face's image (in the page's language) is made ahead, a few at a time while the
// page is idle, so the patch that first shows a card only clones it: twelve new faces drawn, encoded
// and added to the sheet in the patch cost a slow phone ~10 ms
function warm() {
  if (warmed.has(lang())) return;
  warmed.add(lang());
  const codes = ["r", "y", "g", "b"].flatMap((c) => KIND_ORDER.slice(0, 16).map((k) => `${c}-${k}`))
    .concat(KIND_ORDER.slice(16).map((k) => `w-${k}`));
  const jobs = ["xs", "full"].flatMap((cut) => codes.map((code) => [code, cut]));
  const step = (deadline) => {
    const until = performance.now() + 4;
    while (jobs.length && deadline.timeRemaining() > 1 && performance.now() < until) artOf(...jobs.pop());
    if (jobs.length) idle(step);
  };
  idle(step);
}
idle(warm); // once the page has set its language

export function cardBack(opts = {}) {
  return h("span.card.back", { class: opts.size ? `card-${opts.size}` : "", "aria-hidden": "true" },
    h("span.face", h("span.oval"), h("span.logo", "M")));
}
