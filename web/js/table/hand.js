// The player's own hand (cards keyed, so a card keeps its element and focus across renders), laid
// out to fit its box, and the player's row under it: avatar, score, cards against the mercy limit.
import { cardFace, cardName, sortHand } from "../cards.js";
import { legal, me, media } from "../core.js";
import { h, removeEl, replace, setText } from "../dom.js";
import { t } from "../i18n.js";
import { avatar } from "../lobby.js";
import { onCard, playPending } from "./actions.js";
import { isMyTurn, T } from "./state.js";

export function renderHand(v, fx) {
  const g = v.game;
  const lg = legal();
  const hand = sortHand(v.hand || []);
  const waiting = playPending();
  setText(T.handH, t("table.yourHand", { n: hand.length }));
  const counts = new Map();
  const keys = hand.map((code) => {
    const n = (counts.get(code) || 0) + 1;
    counts.set(code, n);
    return `${code}#${n}`;
  });
  // the cards that left go first: removed after the others were put in order, each card behind a
  // played one was moved (taken out and put back), so styled and laid out again from scratch
  const keep = new Set(keys);
  for (const [key, btn] of T.cards) {
    if (!keep.has(key)) {
      removeEl(btn);
      T.cards.delete(key);
    }
  }
  let prevColor = null;
  let drawnMarked = false;
  hand.forEach((code, i) => {
    const key = keys[i];
    let btn = T.cards.get(key);
    if (!btn) {
      btn = cardFace(code, { tag: "button", class: "hand-card" });
      btn.type = "button";
      btn.dataset.key = `card:${key}`;
      btn.addEventListener("click", () => onCard(code, btn));
      T.cards.set(key, btn);
      if (!fx.welcome) T.fresh.push(btn); // effects.js brings it in from where it came (motion.js)
    }
    // while a play waits for the server's answer the cards keep their looks: the answer restyles
    // them once, not the tap's frame too (no second card is played meanwhile: actions.js)
    const playable = waiting ? btn.classList.contains("playable") : lg.play.includes(code) && !g.winner;
    const color = code[0];
    btn.classList.toggle("playable", playable);
    btn.classList.toggle("group-start", prevColor !== null && color !== prevColor);
    prevColor = color;
    const drawn = !drawnMarked && g.drawn === code;
    if (drawn) drawnMarked = true;
    btn.classList.toggle("drawn", drawn);
    const state = `${playable}|${drawn}`;
    if (btn.handState !== state) { // its words only when they change (cards keep theirs across most patches)
      btn.handState = state;
      btn.setAttribute("aria-disabled", String(!playable));
      btn.setAttribute("aria-label", `${cardName(code)}, ${playable ? t("table.playable") : t("table.notPlayable")}${drawn ? `, ${t("table.justDrawn")}` : ""}`);
    }
    if (T.hand.children[i] !== btn) T.hand.insertBefore(btn, T.hand.children[i] || null);
  });
  if (!waiting) T.hand.classList.toggle("my-turn", isMyTurn(g));
  if (T.hand.dataset.size !== String(hand.length)) T.hand.dataset.size = String(hand.length);
  T.hand.classList.toggle("big", hand.length >= 10);
  T.hand.classList.toggle("huge", hand.length >= 17);
  fitHand(T.hand);
}

// A hand wider than its row overlaps its cards, as card players hold them, instead of wrapping
// into more rows: from about 12 cards the rows pushed the hand's bottom and the keyboard hints
// below the fold of a laptop screen. Each card keeps its top-left corner in view (colour letter,
// symbol, value: cards.js draws the whole name there) and so a strip to click. A hand too big for
// one row even so takes smaller cards and as many rows as it needs, overlapped alike. Touch
// screens and narrow windows keep whole cards in rows, as before: a sliver is no tap target.
export const NO_FAN = "(pointer: coarse), (max-width: 600px)";
const CORNER_MARGIN = 4; // px between a corner's text and the next card's edge

export function fitHand(hand) {
  hand.classList.remove("fan", "fan-small");
  hand.style.removeProperty("--fan-over");
  hand.style.removeProperty("--fan-gap");
  hand.style.removeProperty("padding-left");
  const cards = [...hand.querySelectorAll(".hand-card")];
  if (cards.length < 2 || media(NO_FAN).matches) return;
  let plan = fanPlan(hand, cards);
  if (plan && plan.rows > 1) {
    hand.classList.add("fan-small");
    plan = fanPlan(hand, cards);
  }
  if (!plan || plan.step === null) return;
  // each card is pulled left over its neighbour (the first of each row too: the padding makes up
  // for it), or set a narrower gap apart; flex-wrap then breaks the rows where the cards fill them
  const over = Math.max(0, plan.w - plan.step);
  hand.style.setProperty("--fan-over", `${over.toFixed(2)}px`);
  hand.style.setProperty("--fan-gap", `${Math.max(0, plan.step - plan.w).toFixed(2)}px`);
  hand.style.paddingLeft = `${(plan.padLeft + over).toFixed(2)}px`;
  hand.classList.add("fan");
}

/** null when whole cards fit one row; else the rows and the step from a card to the next (null:
 * rows of cards as they are). */
function fanPlan(hand, cards) {
  const n = cards.length;
  const cs = getComputedStyle(hand);
  const padLeft = parseFloat(cs.paddingLeft) || 0;
  const room = hand.clientWidth - padLeft - (parseFloat(cs.paddingRight) || 0) - 1;
  const w = cards[0].offsetWidth;
  const gap = parseFloat(cs.columnGap) || 0;
  const starts = cards.filter((c) => c.classList.contains("group-start"));
  const groupGap = starts.length ? parseFloat(getComputedStyle(starts[0]).marginLeft) || 0 : 0;
  if (n * w + (n - 1) * gap + starts.length * groupGap <= room) return null;
  // the widest corner in the hand ("+10"): its right edge, a fraction of the card's width
  // (cards.js data-corner), so no layout box is read
  let least = w * 0.3;
  for (const card of cards) {
    const right = Number((card.dataset.corner || "").split(" ")[2]);
    if (right) least = Math.max(least, right * w);
  }
  least = Math.min(w, least + CORNER_MARGIN);
  for (let rows = 1; rows <= n; rows++) {
    const perRow = Math.ceil(n / rows);
    // every colour change is counted in each row: a row never holds fewer cards than planned
    const step = perRow < 2 ? w : (room - w - Math.min(starts.length, perRow - 1) * groupGap) / (perRow - 1);
    if (step >= w + gap) return { rows, step: null };
    if (step >= least) return { rows, step: Math.floor(step * 100) / 100, w, padLeft };
  }
  return { rows: n, step: null };
}

export function renderMine(v) {
  const meP = me();
  const note = T.note;
  if (!meP) {
    T.mine.hidden = true;
    note.hidden = false;
    note.textContent = t("table.spectating");
    T.root.classList.add("spectating");
    return;
  }
  T.root.classList.remove("spectating");
  T.mine.hidden = false;
  note.hidden = !meP.eliminated || !!v.game.winner;
  note.textContent = meP.eliminated ? t("table.youEliminated") : "";
  const limit = v.room.rules.mercy_limit;
  const n = meP.cards;
  // built again only when what it shows changed (not on every patch)
  const dealer = v.game?.dealer === meP.id;
  const sig = [meP.name, meP.hue, v.room.rules.scoring ? meP.score : null, n, limit, !!meP.eliminated, dealer].join("|");
  if (T.mineSig === sig && T.mine.firstChild) return;
  T.mineSig = sig;
  const pct = Math.min(100, Math.round((n / limit) * 100));
  replace(T.mine,
    avatar(meP),
    h("span.mine-name", meP.name),
    dealer ? h("span.badge.badge-dealer", { title: t("table.dealer") }, t("table.dealer")) : null,
    v.room.rules.scoring ? h("span.badge.badge-score", t("table.score", { n: meP.score })) : null,
    h("span.meter.mine-meter", { class: pct >= 80 ? "danger" : pct >= 56 ? "warn" : "", role: "meter", "aria-valuemin": "0",
      "aria-valuenow": String(n), "aria-valuemax": String(limit), "aria-label": t("table.mercy", { n, max: limit }),
      title: t("table.mercy", { n, max: limit }) }, h("span.fill", { style: { width: `${pct}%` } })),
    h("span.mine-mercy", { "aria-hidden": "true" }, `${n}/${limit}`));
  T.root.classList.toggle("me-out", !!meP.eliminated);
}
