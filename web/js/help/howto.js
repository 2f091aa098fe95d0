// "How to play": the No Mercy cards, the mercy rule, stacking, drawing, UNO and points, in the
// language in use and as this room plays (its options: the mercy limit, the stacking mode, the
// draw rule, the penalty and window of a catch, the target score, the cards in its deck).
import { cardFace, parse, sortHand } from "../cards.js";
import { media } from "../core.js";
import { h } from "../dom.js";
import { cardHelp, ht } from "./cards-help.js";

const TOUCH = "(hover: none), (pointer: coarse)";

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
    section(ht("howto.fair.h"), h("p.howto-fair", ht("howto.fair"))),
    // a touch screen has no ? key to press and nothing to hover
    h("p.note", ht(media(TOUCH).matches ? "help.hintTouch" : "help.hint")),
  ];
}

// the open panel and the rules it was written from: the rules can arrive (a page opened on a room
// whose state is still on its way) or change (the host, in the lobby) while someone reads it
let shown = null;

// On a phone the panel is a page of its own, 2,750 px long, and was hard to leave: its one Close
// button was at its foot and a tap beside it did nothing. Its header (the title and ×) stays at
// the top as it scrolls; Esc (the native dialog's), a tap on the backdrop and the phone's back
// button close it too. For the back button the panel opens a history entry of its own (the same
// URL); closing it any other way goes back over that entry. Those two history moves are the
// panel's: the router (app.js) never sees them, or it would open the room again.
const ENTRY = "mercylessHowto";
let ownPops = 0; // history.back() calls of ours still to arrive as popstate

window.addEventListener("popstate", (e) => {
  if (ownPops > 0) {
    ownPops -= 1;
    e.stopImmediatePropagation();
    return;
  }
  if (shown?.entry && !history.state?.[ENTRY]) {
    e.stopImmediatePropagation(); // the back button closed the panel, and only that
    shown.entry = false;
    shown.dlg.close();
  }
}, true); // capture: before the router's listener on the same window

function body(rules, close) {
  return h("div.dlg-body",
    h("div.howto-head",
      h("h2#howto-h.dlg-title", ht("howto.title")),
      h("button.icon-btn.howto-close", { type: "button", "aria-label": ht("howto.close"), title: ht("howto.close"), onclick: close },
        h("span", { "aria-hidden": "true" }, "×"))),
    ...howToContent(rules));
}

/** Opens the panel for `rules` (a native dialog: ×, Esc, a tap beside it or Back shuts it). */
export function openHowTo(rules) {
  const dlg = h("dialog.dlg.dlg-howto", { "aria-labelledby": "howto-h" }, body(rules, () => dlg.close()));
  const mine = { dlg, key: JSON.stringify(rules), entry: false };
  shown = mine;
  // a tap on the backdrop lands on the dialog itself, outside its box
  dlg.addEventListener("click", (e) => {
    if (e.target !== dlg) return;
    const r = dlg.getBoundingClientRect();
    if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) dlg.close();
  });
  dlg.addEventListener("close", () => {
    dlg.remove();
    if (shown === mine) shown = null;
    if (mine.entry && history.state?.[ENTRY]) {
      mine.entry = false;
      ownPops += 1;
      history.back();
    }
  });
  document.body.append(dlg);
  dlg.showModal();
  history.pushState({ ...(history.state || {}), [ENTRY]: true }, "");
  mine.entry = true;
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
