// "How to play": the No Mercy cards, the mercy rule, stacking, drawing, UNO and points, in the
// language in use and as this room plays (its options: the mercy limit, the stacking mode, the
// draw rule, the penalty and window of a catch, the target score, the cards in its deck).
import { cardFace, parse, sortHand } from "../cards.js";
import { h } from "../dom.js";
import { cardHelp, ht } from "./cards-help.js";

// one card of each kind worth explaining, in the order a first-timer meets them
const KINDS = ["draw2", "draw4", "skip", "skipall", "reverse", "discard", "reverse4", "draw6", "draw10", "roulette", "wild", "7", "0"];

function examples(rules) {
  const deck = Object.keys(rules.deck || {});
  const seen = new Map();
  for (const code of sortHand(deck)) {
    const p = parse(code);
    if (KINDS.includes(p.kind) && !seen.has(p.kind)) seen.set(p.kind, code);
  }
  if (rules.seven === "off") seen.delete("7");
  if (rules.zero === "off") seen.delete("0");
  return KINDS.filter((k) => seen.has(k)).map((k) => seen.get(k));
}

function section(title, ...body) {
  return h("section.howto-part", h("h3", title), ...body);
}

/** The panel's content for `rules`. */
export function howToContent(rules = {}) {
  const cards = examples(rules).map((code) => {
    const help = cardHelp(code, rules);
    return h("li.howto-card", { "data-card-kind": parse(code).kind },
      cardFace(code, { size: "sm" }),
      h("div", h("b", help.kind), help.effect.map((line) => h("p", line))));
  });
  return [
    h("p.dlg-desc", ht("howto.room")),
    section(ht("howto.goal.h"), h("p", ht("howto.goal"))),
    section(ht("howto.cards.h"), h("ul.howto-cards", cards)),
    section(ht("howto.stack.h"), h("p", ht(`howto.stack.${rules.stacking || "ladder"}`))),
    section(ht("howto.mercy.h"), h("p.howto-mercy", ht("howto.mercy", { n: rules.mercy_limit ?? 25 }))),
    section(ht("howto.draw.h"), h("p", ht(`howto.draw.${rules.draw || "voluntary"}`))),
    section(ht("howto.uno.h"), h("p", ht("howto.uno", { s: rules.catch_window_s ?? 5, n: rules.uno_penalty ?? 2 }))),
    section(ht("howto.score.h"), h("p", rules.scoring === false ? ht("howto.score.off") : ht("howto.score", { target: rules.target_score ?? 1000 }))),
    h("p.note", ht("help.hint")),
  ];
}

// the open panel and the rules it was written from: the rules can arrive (a page opened on a room
// whose state is still on its way) or change (the host, in the lobby) while someone reads it
let shown = null;

function body(rules, close) {
  return h("div.dlg-body",
    h("h2#howto-h.dlg-title", ht("howto.title")),
    ...howToContent(rules),
    h("div.dlg-actions", h("button.btn.primary", { type: "button", onclick: close }, ht("howto.close"))));
}

/** Opens the panel for `rules` (a native dialog: Esc or Close shuts it). */
export function openHowTo(rules) {
  const dlg = h("dialog.dlg.dlg-howto", { "aria-labelledby": "howto-h" }, body(rules, () => dlg.close()));
  shown = { dlg, key: JSON.stringify(rules) };
  dlg.addEventListener("close", () => {
    dlg.remove();
    if (shown?.dlg === dlg) shown = null;
  });
  document.body.append(dlg);
  dlg.showModal();
  return dlg;
}

/** Rewrites the open panel, if any, when the room's rules are not the ones it shows. */
export function refreshHowTo(rules) {
  if (!shown || !rules) return;
  const key = JSON.stringify(rules);
  if (key === shown.key) return;
  const { dlg } = shown;
  const scroll = dlg.querySelector(".dlg-body")?.scrollTop || 0;
  dlg.replaceChildren(body(rules, () => dlg.close()));
  dlg.querySelector(".dlg-body").scrollTop = scroll;
  shown.key = key;
}

/** The top bar's "?" button, opening the panel with the rules `rulesNow()` gives. */
export function howToButton(rulesNow) {
  const label = ht("howto.open");
  return h("button.icon-btn.howto-btn", { type: "button", "aria-label": label, title: label, "data-key": "howto",
    onclick: () => openHowTo(rulesNow() || {}) }, "?");
}
