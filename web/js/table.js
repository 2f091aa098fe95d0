// The table, its parts in table/: built here once per stage and language, then each part updated
// in place (cards and seats keyed), so a click is never lost to a re-render while bots play around
// you. Legality always comes from game.legal.
import { cardBack } from "./cards.js";
import { chatMenu } from "./chat.js";
import { S, announce, media, reducedMotion, secondsLeft, serverNow } from "./core.js";
import { h, replace } from "./dom.js";
import { lang, t } from "./i18n.js";
import { onDraw, onHandKey, onPass, onReact, onUno } from "./table/actions.js";
import { handlePending } from "./table/choices.js";
import { renderControls, renderTurn } from "./table/controls.js";
import { applyFx, measureFx } from "./table/effects.js";
import { fitHand, NO_FAN, renderHand, renderMine } from "./table/hand.js";
import { renderOpponents, SHORT_WIDE } from "./table/opponents.js";
import { renderCenter, renderStack } from "./table/piles.js";
import { renderOverlay } from "./table/round-over.js";
import { setTable, T } from "./table/state.js";

export { onTableKey } from "./table/actions.js";

const REACTIONS = ["gg", "thumbs_up", "wow", "lol", "ouch", "angry", "clap", "uno"];

export function resetTable() {
  T?.overFit?.disconnect();
  setTable(null);
}

function build(stage) {
  const pileBtn = h("button.pile-draw", { type: "button", "data-key": "pile", onclick: () => onDraw() },
    cardBack({ size: "lg" }), h("span.pile-count"));
  const discard = h("div.discard", { "aria-live": "off" });
  const colorChip = h("div.color-chip");
  const dirEl = h("div.direction");
  const center = h("section.center", { "aria-label": t("table.discard", { card: "", color: "" }).replace(/[,:].*$/, "") },
    h("div.piles", h("div.pile", pileBtn), h("div.pile.discard-pile", discard)),
    h("div.tableinfo", colorChip, dirEl));
  // the seats around the table (table/opponents.js): on a wide screen a ring, from the player's
  // left over the top to their right, with the piles in the middle; on a phone one row across
  // the top and the others beside the piles. The direction of play is drawn along the oval behind.
  const seats = { left: h("ul.seats.seats-left", { "aria-label": t("table.opponents") }),
    top: h("ul.seats.seats-top", { "aria-label": t("table.opponents") }),
    right: h("ul.seats.seats-right", { "aria-label": t("table.opponents") }) };
  const arrows = h("div.ring-dir", { "aria-hidden": "true" });
  const opponents = h("div.opponents.ring", arrows, seats.top, seats.left, center, seats.right);
  const stackBar = h("div.stackbar", { hidden: true });
  const reveal = h("div.reveal", { hidden: true, "aria-hidden": "true" });

  const turnText = h("span.turn-text");
  const turnSecs = h("span.turn-secs");
  const turnBar = h("span.timerbar", h("span.fill"));
  const turnLine = h("div.turnline", turnText, turnSecs, turnBar);
  const exposedMe = h("div.exposed-me", { hidden: true });

  const takeBtn = h("button.btn.danger.big", { type: "button", "data-key": "take", "aria-keyshortcuts": "D", onclick: () => onDraw() });
  const drawBtn = h("button.btn.big", { type: "button", "data-key": "draw", "aria-keyshortcuts": "D", onclick: () => onDraw() }, t("table.draw"));
  const passBtn = h("button.btn.big", { type: "button", "data-key": "pass", "aria-keyshortcuts": "P", onclick: () => onPass() }, t("table.pass"));
  const unoBtn = h("button.btn.uno.big", { type: "button", "data-key": "uno", "aria-keyshortcuts": "U", onclick: () => onUno() });
  const unoFlag = h("span.uno-flag", { hidden: true }, t("table.unoCalled"));
  const controls = h("div.controls", takeBtn, drawBtn, passBtn, unoBtn, unoFlag);

  const handH = h("h2#hand-h.hand-h");
  const hand = h("div#hand.hand", { role: "group", "aria-labelledby": "hand-h", onkeydown: onHandKey });
  // the fan follows the hand's width (a resized window, the log column coming and going); its
  // border box, as fitHand changes the padding
  let handWidth = 0;
  new ResizeObserver((entries) => {
    const width = entries[0].borderBoxSize?.[0]?.inlineSize ?? hand.offsetWidth;
    if (Math.abs(width - handWidth) < 0.5) return;
    handWidth = width;
    if (T?.hand === hand) fitHand(hand);
  }).observe(hand, { box: "border-box" });
  const mine = h("div.mine");
  const note = h("p.note.table-note", { hidden: true });
  const keysHint = h("p.keys-hint", t("table.shortcuts"));
  const reactions = h("details.react-menu", h("summary", t("react.label")),
    h("div.reactions", { role: "group", "aria-label": t("react.label") },
      REACTIONS.map((r) => h("button.react", { type: "button", "data-key": `react:${r}`, onclick: (e) => onReact(r, e.currentTarget) }, t(`react.${r}`)))));
  // the log's last line, shown where a phone player looks (the log itself sits below the table
  // and starts closed there); the log already announces it to screen readers
  const ticker = h("p#ticker.ticker", { "aria-hidden": "true" });
  const meBox = h("section.me", { "aria-label": t("table.yourHand", { n: "" }).replace(/\s*\(.*\)/, "") },
    ticker, turnLine, exposedMe, stackBar, controls, handH, hand, note, h("div.mine-row", mine, h("div.say-row", chatMenu(), reactions)), keysHint);

  const overlay = h("div.overlay", { hidden: true });
  const root = h("div.table", opponents, reveal, meBox, overlay);
  // the table comes after the lobby (Start sits at its foot): it opens at its top, not at the
  // lobby's scroll, which kept the top row of seats under the sticky bar
  const fromLobby = !T;
  replace(stage, root);
  if (fromLobby && window.scrollY) window.scrollTo(0, 0);
  setTable({
    stage, root, lang: lang(), opponents, seats, arrows, arrowsDir: null, chips: new Map(), pileBtn, discard, colorChip, dirEl, stackBar, reveal,
    turnText, turnSecs, turnBar, exposedMe, takeBtn, drawBtn, passBtn, unoBtn, unoFlag, handH, hand, cards: new Map(),
    mine, note, overlay, overFit: null, overKey: null, topKey: null, revealTimer: null, fresh: [],
  });
}

// -- entry points -------------------------------------------------------------------------------

export function renderTable(stage, fx = {}) {
  if (!T || T.stage !== stage || !stage.contains(T.root) || T.lang !== lang()) build(stage);
  const v = S.view;
  const g = v.game;
  if (!g) return;
  const hand = v.hand || [];
  if (hand.length !== 2) S.ui.unoArmed = false;
  renderOpponents(v);
  renderCenter(v);
  renderStack(v);
  renderTurn(v);
  renderControls(v);
  renderHand(v, fx);
  renderMine(v);
  renderOverlay(v);
  fitTable();
  // the movements start on the next frame, from places read now, once the view is built (one
  // layout in the patch's task; the frame only styles and paints them: measureFx)
  const fresh = T.fresh;
  T.fresh = [];
  if (fx && !fx.welcome && Object.keys(fx).length) {
    const at = measureFx(fx, fresh);
    const root = T.root;
    requestAnimationFrame(() => {
      if (T && T.root === root && root.isConnected) applyFx(fx, at);
    });
  }
  // a dialog opens (and takes the focus) once the places are read: its focus then styles and lays
  // out little more than the dialog itself
  handlePending(v);
  tick();
}

// A crowded table on a laptop screen (two rows of opponents, a stack bar, a player to catch, a big
// hand) pushed the hand and the key hints below the fold. When the bottom of the player's box does
// not fit the window, the table tightens step by step, each step kept while a later one is added:
// compact opponent chips in one row, smaller piles, a tighter hand box with smaller cards, then the
// turn line and the buttons in one row (ten seats and 16 cards at 1100x640 needed that). Not on
// phones and touch screens: they scroll, and keep their own whole-card layout; nor on a short, wide
// window (a phone on its side), which has a layout of its own for that (style.css).
const SNUG = ["snug-opps", "snug-piles", "snug-me", "snug-row"];

function fitTable() {
  if (!T) return;
  const root = T.root;
  const smaller = root.classList.contains("snug-me");
  root.classList.remove(...SNUG);
  if (smaller) fitHand(T.hand); // planned for the smaller cards
  const bottom = () => T.hand.closest(".me").getBoundingClientRect().bottom + window.scrollY;
  const fits = () => bottom() <= document.documentElement.clientHeight;
  if (!media(NO_FAN).matches && !media(SHORT_WIDE).matches && !root.classList.contains("spectating") && !fits()) {
    for (const c of SNUG) {
      root.classList.add(c);
      if (c === "snug-me") fitHand(T.hand); // its cards are smaller: the fan is planned again
      if (fits()) break;
    }
  }
}

let fitFrame = 0;
window.addEventListener("resize", () => {
  cancelAnimationFrame(fitFrame);
  fitFrame = requestAnimationFrame(() => {
    if (T && T.root.isConnected) fitTable();
  });
});

/** Countdowns: every element with data-deadline (server clock) is refreshed. */
export function tick() {
  if (!T) return;
  const now = serverNow();
  for (const el of T.root.querySelectorAll("[data-deadline]")) {
    const deadline = Number(el.dataset.deadline);
    const left = Math.max(0, deadline - now);
    if (el.dataset.total) {
      const fill = el.querySelector(".fill");
      const pct = Math.max(0, Math.min(100, (left / Number(el.dataset.total)) * 100));
      if (fill) fill.style.width = `${pct}%`;
      el.classList.toggle("low", left < 10000);
    }
    if (el.dataset.fmt) el.textContent = t(el.dataset.fmt, { s: Math.ceil(left / 1000) });
  }
  const dlgTimer = document.querySelector("#dlg [data-deadline]");
  if (dlgTimer) dlgTimer.textContent = t("dlg.choice.timer", { s: secondsLeft(Number(dlgTimer.dataset.deadline)) });
}

/** The player's turn came: the page scrolls, as little as it can, so the player's own box shows
 * to its end (ten seats on a phone fill the screen with opponents), but not so far that the
 * piles go under the sticky top bar: on a short screen (a phone on its side) the pile and the
 * hand's first cards show together when they fit, and the cards alone when they do not. */
export function bringHandIntoView() {
  if (!T || !T.root.isConnected) return;
  const bar = document.querySelector(".topbar");
  const top = bar ? Math.max(0, bar.getBoundingClientRect().bottom) : 0;
  const h = document.documentElement.clientHeight;
  const box = T.hand.closest(".me").getBoundingClientRect();
  const hand = T.hand.getBoundingClientRect();
  const piles = T.root.querySelector(".center .piles")?.getBoundingClientRect();
  const pilesShow = !piles || (piles.top >= top && piles.bottom <= h);
  if (hand.top >= top && hand.bottom <= h && pilesShow) return;
  let by = box.bottom - h;
  if (piles) by = Math.min(by, piles.top - top - 8);
  // the hand's first row shows whatever it costs: with no room for both, the cards to play win
  const first = T.hand.firstElementChild?.getBoundingClientRect();
  if (first) by = Math.max(by, first.bottom - h + 4);
  if (Math.abs(by) < 1) return;
  window.scrollBy({ top: by, behavior: reducedMotion() ? "auto" : "smooth" });
}

export function announceTurn() {
  announce(t("ev.yourTurn"));
}
