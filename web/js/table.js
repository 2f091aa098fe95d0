// The table: opponents, piles, stack, turn and timer, own hand, controls, choices, round over.
// Elements are built once and updated in place (cards and seats keyed), so a click is never
// lost to a re-render while bots play around you. Legality always comes from game.legal.
import { cardBack, cardFace, cardName, colorName, parse, sortHand } from "./cards.js";
import { S, announce, botLevel, isHost, legal, me, name, reducedMotion, secondsLeft, send, serverNow, toast } from "./core.js";
import { askColor, askTarget, askTop, closeDialog, dialogKey } from "./dialogs.js";
import { h, replace, svg } from "./dom.js";
import { lang, t } from "./i18n.js";
import { historyPanel } from "./history.js";
import { avatar } from "./lobby.js";
import { sound } from "./sound.js";

const CLOSED = "\u0000closed"; // a dialog closed because the game moved on (not the user's cancel)
const CATCH_COOLDOWN_MS = 1500;
const REACTIONS = ["gg", "thumbs_up", "wow", "lol", "ouch", "angry", "clap", "uno"];
let T = null;

const DIR_ICON = '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round" stroke-linejoin="round"><path d="M20 12a8 8 0 1 1-2.34-5.66"/><path d="M20 3v5h-5"/></svg>';

export function resetTable() {
  T = null;
}

function isMyTurn(g) {
  if (!g || g.winner) return false;
  if (g.pending) return g.pending.player === S.you;
  return g.turn === S.you;
}

function seatOrder(players) {
  const i = players.findIndex((p) => p.id === S.you);
  if (i < 0) return players;
  return [...players.slice(i + 1), ...players.slice(0, i)];
}

// -- building ---------------------------------------------------------------------------------

function build(stage) {
  const opponents = h("ul.opponents", { "aria-label": t("table.opponents") });
  const pileBtn = h("button.pile-draw", { type: "button", "data-key": "pile", onclick: () => onDraw() },
    cardBack({ size: "lg" }), h("span.pile-count"));
  const discard = h("div.discard", { "aria-live": "off" });
  const colorChip = h("div.color-chip");
  const dirEl = h("div.direction");
  const center = h("section.center", { "aria-label": t("table.discard", { card: "", color: "" }).replace(/[,:].*$/, "") },
    h("div.piles", h("div.pile", pileBtn), h("div.pile.discard-pile", discard)),
    h("div.tableinfo", colorChip, dirEl));
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
    ticker, turnLine, exposedMe, stackBar, controls, handH, hand, note, h("div.mine-row", mine, reactions), keysHint);

  const overlay = h("div.overlay", { hidden: true });
  const root = h("div.table", opponents, center, reveal, meBox, overlay);
  replace(stage, root);
  T = {
    stage, root, lang: lang(), opponents, chips: new Map(), pileBtn, discard, colorChip, dirEl, stackBar, reveal,
    turnText, turnSecs, turnBar, exposedMe, takeBtn, drawBtn, passBtn, unoBtn, unoFlag, handH, hand, cards: new Map(),
    mine, note, overlay, overFit: null, overKey: null, topKey: null, revealTimer: null,
  };
}

// -- opponents --------------------------------------------------------------------------------

function makeChip(p) {
  const c = {};
  c.li = h("li.opp", { "data-player": p.id });
  c.av = avatar(p.id, p.name);
  c.name = h("span.opp-name");
  c.badges = h("span.badges");
  c.dot = h("span.dot", { role: "img" });
  c.count = h("span.opp-count");
  c.fill = h("span.fill");
  c.meter = h("span.meter", { role: "meter", "aria-valuemin": "0" }, c.fill);
  c.status = h("span.opp-status");
  c.timer = h("span.timerbar", { hidden: true }, h("span.fill"));
  c.catchBtn = h("button.btn.catch", { type: "button", hidden: true, "data-key": `catch:${p.id}`, onclick: () => onCatch(p.id) });
  c.li.append(h("div.opp-top", c.av, h("div.opp-who", c.name, c.badges), c.dot),
    h("div.opp-mid", h("span.mini-back", { "aria-hidden": "true" }), c.count, c.status), c.meter, c.catchBtn, c.timer);
  return c;
}

function updateChip(c, p, v) {
  const g = v.game;
  const rules = v.room.rules;
  const limit = rules.mercy_limit;
  const turn = g && !g.winner && (g.pending ? g.pending.player === p.id : g.turn === p.id);
  c.li.classList.toggle("turn", !!turn);
  c.li.classList.toggle("out", !!p.eliminated);
  c.li.classList.toggle("offline", !p.connected);
  c.li.classList.toggle("winner", !!(g && g.winner === p.id));
  c.name.textContent = p.name;
  const badges = [];
  if (p.bot) {
    const level = botLevel(p);
    badges.push(h("span.badge.badge-bot", level ? [h("span.bb-prefix", "Bot · "), t(`level.${level}`)] : "Bot"));
  }
  if (v.room.host === p.id) badges.push(h("span.badge.badge-host", t("lobby.host")));
  if (g && g.dealer === p.id) badges.push(h("span.badge.badge-dealer", { title: t("table.dealer") }, t("table.dealer")));
  if (rules.scoring && p.score) badges.push(h("span.badge.badge-score", t("table.score", { n: p.score })));
  replace(c.badges, badges);
  c.dot.className = `dot ${p.connected ? "on" : "off"}`;
  c.dot.setAttribute("aria-label", t(p.connected ? "online" : "table.disconnected"));
  c.dot.title = t(p.connected ? "online" : "table.disconnected");
  const n = p.cards;
  replace(c.count, h("b", String(n)), h("span.sr-only", ` ${n === 1 ? t("table.card1").replace(/^1\s*/, "") : t("unit.cards")}`));
  const pct = Math.min(100, Math.round((n / limit) * 100));
  c.fill.style.width = `${pct}%`;
  c.meter.className = `meter${pct >= 80 ? " danger" : pct >= 56 ? " warn" : ""}`;
  c.meter.setAttribute("aria-valuenow", String(n));
  c.meter.setAttribute("aria-valuemax", String(limit));
  c.meter.setAttribute("aria-label", t("table.mercy", { n, max: limit }));
  c.meter.title = t("table.mercy", { n, max: limit });
  const status = [];
  if (p.eliminated) status.push(h("span.flag.flag-out", { title: t("table.eliminatedLong") }, t("table.eliminated")));
  else if (p.uno) status.push(h("span.flag.flag-uno", "UNO"));
  if (g && g.stack && g.stack.target === p.id && !g.winner) status.push(h("span.flag.flag-stack", `+${g.stack.total}`));
  replace(c.status, status);
  // turn timer
  if (turn && g.turn_deadline && rules.turn_timer_s) {
    c.timer.hidden = false;
    c.timer.dataset.deadline = g.turn_deadline;
    c.timer.dataset.total = rules.turn_timer_s * 1000;
  } else {
    c.timer.hidden = true;
    delete c.timer.dataset.deadline;
  }
  // catch
  const exposed = g && (g.exposed || []).find((e) => e.player === p.id);
  const canCatch = exposed && legal().catch.includes(p.id);
  if (canCatch) {
    c.catchBtn.hidden = false;
    c.catchBtn.dataset.deadline = exposed.until;
    c.catchBtn.dataset.fmt = "table.catchShort";
    c.catchBtn.setAttribute("aria-label", t("table.catch", { name: p.name }));
    c.catchBtn.textContent = t("table.catchShort", { s: secondsLeft(exposed.until) });
    c.catchBtn.disabled = (S.ui.catchCool.get(p.id) || 0) > Date.now();
  } else {
    c.catchBtn.hidden = true;
    delete c.catchBtn.dataset.deadline;
  }
  c.li.classList.toggle("exposed", !!exposed);
}

function renderOpponents(v) {
  const list = seatOrder(v.players).filter((p) => p.id !== S.you);
  const seen = new Set();
  list.forEach((p, i) => {
    let c = T.chips.get(p.id);
    if (!c) {
      c = makeChip(p);
      T.chips.set(p.id, c);
    }
    updateChip(c, p, v);
    if (T.opponents.children[i] !== c.li) T.opponents.insertBefore(c.li, T.opponents.children[i] || null);
    seen.add(p.id);
  });
  for (const [id, c] of T.chips) {
    if (!seen.has(id)) {
      c.li.remove();
      T.chips.delete(id);
    }
  }
  T.opponents.dataset.count = String(list.length);
}

// -- centre -------------------------------------------------------------------------------------

function renderCenter(v) {
  const g = v.game;
  const lg = legal();
  const stackOnMe = g.stack && g.stack.target === S.you;
  T.pileBtn.querySelector(".pile-count").textContent = String(g.draw_pile);
  const canDraw = lg.draw && !g.winner;
  T.pileBtn.setAttribute("aria-disabled", String(!canDraw));
  T.pileBtn.classList.toggle("can", !!canDraw);
  let label = t("table.drawPile", { n: g.draw_pile });
  if (canDraw) label += `. ${stackOnMe ? t("table.take", { n: g.stack.total }) : t("table.draw")}`;
  T.pileBtn.setAttribute("aria-label", label);
  const topKey = `${v.room.round}:${g.top}:${g.discard_pile}`;
  if (T.topKey !== topKey) {
    const card = cardFace(g.top, { size: "lg" });
    card.setAttribute("aria-label", t("table.discard", { card: cardName(g.top), color: colorName(g.color) }));
    replace(T.discard, card);
    T.topKey = topKey;
  }
  T.discard.className = `discard ring-${g.color[0]}`;
  replace(T.colorChip, h("span.swatch", { class: `sw-${g.color[0]}`, "aria-hidden": "true" }, t(`letter.${g.color[0]}`)),
    h("span", `${t("table.color")}: `, h("b", colorName(g.color))));
  T.colorChip.className = `color-chip cc-${g.color[0]}`;
  replace(T.dirEl, svg(DIR_ICON, `dir-icon${g.direction < 0 ? " ccw" : ""}`), h("span", t(`table.direction.${g.direction}`)));
}

function renderStack(v) {
  const g = v.game;
  const s = g.stack;
  if (!s || g.winner) {
    T.stackBar.hidden = true;
    return;
  }
  T.stackBar.hidden = false;
  const onMe = s.target === S.you;
  T.stackBar.classList.toggle("on-me", onMe);
  replace(T.stackBar, h("span.stack-total", `+${s.total}`),
    h("span.stack-text", onMe ? t("table.stackOnYou", { total: s.total, last: s.last }) : t("table.stackOn", { total: s.total, last: s.last, name: name(s.target) })));
}

function renderTurn(v) {
  const g = v.game;
  const rules = v.room.rules;
  if (g.winner) {
    T.turnText.textContent = "";
    T.turnSecs.textContent = "";
    T.turnBar.hidden = true;
    T.root.dataset.turn = "none";
    return;
  }
  const mine = isMyTurn(g);
  T.root.dataset.turn = mine ? "me" : "other";
  let text;
  if (g.pending && g.pending.player !== S.you) text = t("table.choosing", { name: name(g.pending.player) });
  else if (mine) text = t("table.yourTurn");
  else text = t("table.turnOf", { name: name(g.turn) });
  T.turnText.textContent = text;
  T.turnText.parentElement.classList.toggle("mine", mine);
  if (g.turn_deadline && rules.turn_timer_s) {
    T.turnBar.hidden = false;
    T.turnBar.dataset.deadline = g.turn_deadline;
    T.turnBar.dataset.total = rules.turn_timer_s * 1000;
    T.turnSecs.dataset.deadline = g.turn_deadline;
    T.turnSecs.dataset.fmt = "table.secondsLeft";
    T.turnSecs.textContent = t("table.secondsLeft", { s: secondsLeft(g.turn_deadline) });
  } else {
    T.turnBar.hidden = true;
    delete T.turnSecs.dataset.deadline;
    T.turnSecs.textContent = "";
  }
}

function renderControls(v) {
  const g = v.game;
  const lg = legal();
  const over = !!g.winner;
  const stackOnMe = g.stack && g.stack.target === S.you && !over;
  T.takeBtn.hidden = !(stackOnMe && lg.draw);
  T.takeBtn.textContent = stackOnMe ? t("table.take", { n: g.stack.total }) : "";
  T.drawBtn.hidden = !(lg.draw && !stackOnMe) || over;
  T.passBtn.hidden = !lg.pass || over;
  const hand = v.hand || [];
  const meP = me();
  T.unoFlag.hidden = !(meP && meP.uno && !over);
  const exposed = (g.exposed || []).find((e) => e.player === S.you);
  if (lg.uno && !over) {
    T.unoBtn.hidden = false;
    T.unoBtn.textContent = t("table.unoCall");
    T.unoBtn.removeAttribute("aria-pressed");
    // it pulses only while someone can catch you (one card reached by a 0 or a 7 cannot be)
    T.unoBtn.classList.toggle("urgent", !!exposed);
  } else if (hand.length === 2 && isMyTurn(g) && lg.play.length && !over) {
    T.unoBtn.hidden = false;
    T.unoBtn.classList.remove("urgent");
    T.unoBtn.setAttribute("aria-pressed", String(S.ui.unoArmed));
    T.unoBtn.textContent = S.ui.unoArmed ? `✓ ${t("table.unoArmed")}` : t("table.unoArm");
  } else {
    T.unoBtn.hidden = true;
  }
  if (exposed && !over) {
    T.exposedMe.hidden = false;
    T.exposedMe.dataset.deadline = exposed.until;
    T.exposedMe.dataset.fmt = "table.exposedYou";
    T.exposedMe.textContent = t("table.exposedYou", { s: secondsLeft(exposed.until) });
  } else {
    T.exposedMe.hidden = true;
    delete T.exposedMe.dataset.deadline;
  }
}

// -- hand ---------------------------------------------------------------------------------------

function renderHand(v, fx) {
  const g = v.game;
  const lg = legal();
  const hand = sortHand(v.hand || []);
  T.handH.textContent = t("table.yourHand", { n: hand.length });
  const counts = new Map();
  const keys = [];
  let prevColor = null;
  let drawnMarked = false;
  hand.forEach((code, i) => {
    const n = (counts.get(code) || 0) + 1;
    counts.set(code, n);
    const key = `${code}#${n}`;
    keys.push(key);
    let btn = T.cards.get(key);
    if (!btn) {
      btn = cardFace(code, { tag: "button", class: "hand-card" });
      btn.type = "button";
      btn.dataset.key = `card:${key}`;
      btn.addEventListener("click", () => onCard(code, btn));
      T.cards.set(key, btn);
      if (!fx.welcome && !reducedMotion()) {
        btn.classList.add("enter");
        btn.style.setProperty("--delay", `${Math.min(i, 12) * 25}ms`);
        btn.addEventListener("animationend", () => btn.classList.remove("enter"), { once: true });
      }
    }
    const playable = lg.play.includes(code) && !g.winner;
    const color = code[0];
    btn.classList.toggle("playable", playable);
    btn.classList.toggle("group-start", prevColor !== null && color !== prevColor);
    prevColor = color;
    const drawn = !drawnMarked && g.drawn === code;
    if (drawn) drawnMarked = true;
    btn.classList.toggle("drawn", drawn);
    btn.setAttribute("aria-disabled", String(!playable));
    btn.setAttribute("aria-label", `${cardName(code)}, ${playable ? t("table.playable") : t("table.notPlayable")}${drawn ? `, ${t("table.justDrawn")}` : ""}`);
    if (T.hand.children[i] !== btn) T.hand.insertBefore(btn, T.hand.children[i] || null);
  });
  const keep = new Set(keys);
  for (const [key, btn] of T.cards) {
    if (!keep.has(key)) {
      btn.remove();
      T.cards.delete(key);
    }
  }
  T.hand.classList.toggle("my-turn", isMyTurn(g));
  T.hand.dataset.size = String(hand.length);
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
const NO_FAN = "(pointer: coarse), (max-width: 600px)";
const CORNER_MARGIN = 4; // px between a corner's text and the next card's edge

function fitHand(hand) {
  hand.classList.remove("fan", "fan-small");
  hand.style.removeProperty("--fan-over");
  hand.style.removeProperty("--fan-gap");
  hand.style.removeProperty("padding-left");
  const cards = [...hand.querySelectorAll(".hand-card")];
  if (cards.length < 2 || matchMedia(NO_FAN).matches) return;
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
  // the widest corner in the hand ("+10"), from layout boxes: a lifted or entering card's
  // transform does not count
  let least = w * 0.3;
  for (const card of cards) {
    const corner = card.querySelector(".corner.tl");
    if (corner) least = Math.max(least, (corner.offsetParent?.offsetLeft || 0) + corner.offsetLeft + corner.offsetWidth);
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

function renderMine(v) {
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
  const pct = Math.min(100, Math.round((n / limit) * 100));
  replace(T.mine,
    avatar(meP.id, meP.name),
    h("span.mine-name", meP.name),
    v.room.rules.scoring ? h("span.badge.badge-score", t("table.score", { n: meP.score })) : null,
    h("span.meter.mine-meter", { class: pct >= 80 ? "danger" : pct >= 56 ? "warn" : "", role: "meter", "aria-valuemin": "0",
      "aria-valuenow": String(n), "aria-valuemax": String(limit), "aria-label": t("table.mercy", { n, max: limit }),
      title: t("table.mercy", { n, max: limit }) }, h("span.fill", { style: { width: `${pct}%` } })),
    h("span.mine-mercy", { "aria-hidden": "true" }, `${n}/${limit}`));
  T.root.classList.toggle("me-out", !!meP.eliminated);
}

// -- round over -----------------------------------------------------------------------------------

// The panel lies over the table; the table grows to hold all of it (scores, cards left, the
// night's scores once they load), so the page scrolls to them instead of a box inside the table
// that hid its end on a phone.
function fitOverlay() {
  const fit = () => {
    const panel = T.overlay.firstElementChild;
    // the overlay's padding (16 px a side) and the table's own borders
    const extra = 32 + T.root.offsetHeight - T.root.clientHeight;
    if (panel && !T.overlay.hidden) T.root.style.setProperty("--over-h", `${panel.offsetHeight + extra}px`);
  };
  if (!T.overFit && "ResizeObserver" in window) T.overFit = new ResizeObserver(fit);
  T.overFit?.disconnect();
  if (T.overlay.firstElementChild) T.overFit?.observe(T.overlay.firstElementChild, { box: "border-box" });
  fit();
}

function renderOverlay(v) {
  const status = v.room.status;
  const over = status === "round_over" || status === "match_over";
  T.overlay.hidden = !over;
  T.root.classList.toggle("is-over", over);
  if (!over) {
    T.overKey = null;
    T.overFit?.disconnect();
    T.root.style.removeProperty("--over-h");
    return;
  }
  const g = v.game;
  const key = `${v.room.round}:${status}:${isHost()}:${v.room.host}:${lang()}:${v.players.map((p) => `${p.connected}`).join()}`;
  if (T.overKey === key) return;
  const firstTime = !T.overKey || !T.overKey.startsWith(`${v.room.round}:${status}`);
  T.overKey = key;
  const match = status === "match_over";
  const rules = v.room.rules;
  const youWin = g.winner === S.you;
  const big = youWin ? t(match ? "over.youWinMatch" : "over.youWinRound")
    : t(match ? "over.winsMatch" : "over.winsRound", { name: name(g.winner) });
  const target = rules.target_score;
  const rows = [...v.players].sort((a, b) => b.score - a.score).map((p) => {
    const pct = Math.min(100, Math.round((p.score / target) * 100));
    return h("li.score-row", { class: `${p.id === g.winner ? "win" : ""}${p.eliminated ? " out" : ""}`, "data-player": p.id },
      h("span.sr-name", p.name, p.id === S.you ? h("span.tag", ` (${t("lobby.you")})`) : null),
      h("span.sr-bar", { "aria-hidden": "true" }, h("span.fill", { style: { width: `${pct}%` } })),
      h("span.sr-score", `${p.score}`, p.id === g.winner && g.points ? h("small", ` +${g.points}`) : null));
  });
  const revealed = Object.entries(g.revealed || {}).filter(([, cards]) => cards.length);
  const hands = revealed.length ? h("div.revealed", h("h3", t("over.hands")),
    h("ul", revealed.map(([id, cards]) => h("li", h("span.rv-name", name(id)),
      h("span.rv-cards", sortHand(cards).map((c) => cardFace(c, { size: "xs" }))))))) : null;
  const actions = isHost()
    ? h("button.btn.primary.big.rematch", { type: "button", "data-key": "rematch", onclick: () => send("rematch") }, t(match ? "over.newMatch" : "over.rematch"))
    : h("p.note", { role: "status" }, t("over.waitHost", { name: name(v.room.host) }));
  const panel = h("section.over-panel", { class: match ? "match" : "", role: "region", "aria-labelledby": "over-h" },
    h("p.over-kicker", t(match ? "over.match" : "over.round", { n: v.room.round })),
    h("h2#over-h.over-title", { tabindex: "-1" }, big),
    h("p.over-reason", [t(`over.reason.${g.reason || "out"}`), rules.scoring ? ` · ${t("over.points", { n: g.points ?? 0 })}` : ""].join("")),
    rules.scoring ? h("div.scores", h("h3", t("over.scores", { target })), h("ol.score-list", rows)) : h("p.note", t("over.noScoring")),
    hands,
    h("div.over-actions", actions),
    historyPanel());
  replace(T.overlay, panel);
  fitOverlay();
  if (firstTime) {
    const title = panel.querySelector(".over-title");
    requestAnimationFrame(() => title.focus({ preventScroll: false }));
  }
}

// -- choices from the server --------------------------------------------------------------------

function lastRouletteBy() {
  return S.lastPlay && S.lastPlay.card === "w-roulette" ? S.lastPlay.player : null;
}

async function askPending(p, g, lg, key) {
  const deadline = g.turn_deadline;
  let value;
  let field = "color";
  if (p.choice === "color") {
    value = await askColor({ key, card: p.card, cancel: lg.cancel, deadline });
  } else if (p.choice === "roulette_color") {
    const by = lastRouletteBy();
    value = await askColor({ key, cancel: false, deadline, title: t("dlg.roulette.title"),
      desc: t("dlg.roulette.d", { name: by ? name(by) : "?" }) });
  } else if (p.choice === "target") {
    field = "target";
    value = await askTarget({ key, targets: lg.choose, deadline, cancel: lg.cancel });
  } else if (p.choice === "top") {
    field = "top";
    value = await askTop({ key, cards: lg.choose, deadline });
  }
  if (value === CLOSED) return;
  if (value === null) {
    if (lg.cancel) await send("cancel");
    return;
  }
  const answer = await send("choose", { [field]: value });
  if (answer.type === "error") S.rerender?.();
}

function handlePending(v) {
  const g = v.game;
  const lg = legal();
  const p = g.pending;
  const mine = p && p.player === S.you && !g.winner && lg.choose.length;
  const key = mine ? `pending:${v.room.round}:${p.choice}:${p.card || ""}` : null;
  const open = dialogKey();
  if (open && open.startsWith("pending:") && open !== key) closeDialog(CLOSED);
  if (open && open.startsWith("inline:")) {
    const card = open.split(":")[1];
    if (!lg.play.includes(card) || g.winner) closeDialog(CLOSED);
  }
  if (mine && dialogKey() !== key) askPending(p, g, lg, key);
}

// -- actions ------------------------------------------------------------------------------------

function shake(el) {
  if (!el || reducedMotion()) return;
  el.classList.remove("nope");
  void el.offsetWidth;
  el.classList.add("nope");
  el.addEventListener("animationend", () => el.classList.remove("nope"), { once: true });
}

/** Why a tapped card cannot go on the pile now, in the server's own words for that refusal. */
function whyNot(g) {
  if (!isMyTurn(g)) return "e.not_your_turn";
  if (g.pending) return "e.choice_pending";
  if (g.stack && g.stack.target === S.you) return "e.stack_pending";
  return "e.illegal_card";
}

async function onCard(code, btn) {
  const v = S.view;
  const g = v?.game;
  const lg = legal();
  if (!g || !lg.play.includes(code) || S.ui.playing) {
    shake(btn);
    if (g && !g.winner && !S.ui.playing) toast(t(whyNot(g)), "info", 2500);
    return;
  }
  const rules = v.room.rules;
  const p = parse(code);
  const fields = { card: code };
  const last = v.hand.length === 1;
  const deadline = g.turn_deadline;
  if (!last) {
    if (p.wild && !(p.kind === "roulette" && rules.roulette_chooser === "target")) {
      const roulette = p.kind === "roulette";
      const color = await askColor({ key: `inline:${code}`, card: code, deadline,
        title: roulette ? t("dlg.roulettePlayer.title") : undefined, desc: roulette ? t("dlg.roulettePlayer.d") : undefined });
      if (!color || color === CLOSED) return;
      fields.color = color;
    }
    if (p.kind === "7" && rules.seven !== "off") {
      const targets = v.players.filter((x) => !x.eliminated && (x.id !== S.you || rules.seven === "may_swap")).map((x) => x.id);
      if (rules.seven === "may_swap") targets.sort((a, b) => (a === S.you) - (b === S.you));
      const target = await askTarget({ key: `inline:${code}`, targets, deadline });
      if (!target || target === CLOSED) return;
      fields.target = target;
    }
  }
  if (S.ui.unoArmed && v.hand.length === 2) fields.uno = true;
  S.ui.playing = true;
  try {
    const answer = await send("play", fields);
    if (answer.type === "ack") S.ui.unoArmed = false;
  } finally {
    S.ui.playing = false;
  }
}

async function onDraw() {
  const lg = legal();
  if (!lg.draw) {
    shake(T?.pileBtn);
    return;
  }
  await send("draw");
}

async function onPass() {
  if (legal().pass) await send("pass");
}

async function onUno() {
  const lg = legal();
  if (lg.uno) {
    await send("uno");
    return;
  }
  S.ui.unoArmed = !S.ui.unoArmed;
  if (S.ui.unoArmed) sound("uno");
  S.rerender?.();
}

async function onCatch(id) {
  const until = S.ui.catchCool.get(id) || 0;
  if (until > Date.now()) return;
  S.ui.catchCool.set(id, Date.now() + CATCH_COOLDOWN_MS);
  const c = T?.chips.get(id);
  if (c) c.catchBtn.disabled = true;
  setTimeout(() => S.rerender?.(), CATCH_COOLDOWN_MS + 20);
  await send("catch", { target: id });
}

async function onReact(reaction, btn) {
  const box = btn.closest(".reactions");
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  setTimeout(() => {
    for (const b of box.querySelectorAll("button")) b.disabled = false;
  }, 1100);
  btn.closest("details").open = false;
  await send("react", { reaction });
}

function bubble(el, text) {
  if (!el) return;
  const b = h("span.bubble", { "aria-hidden": "true" }, text);
  el.append(b);
  setTimeout(() => b.remove(), 2600);
}

function onHandKey(e) {
  const cards = [...T.hand.querySelectorAll(".hand-card")];
  const i = cards.indexOf(document.activeElement);
  if (i < 0) return;
  let j = null;
  if (e.key === "ArrowRight" || e.key === "ArrowDown") j = Math.min(cards.length - 1, i + 1);
  else if (e.key === "ArrowLeft" || e.key === "ArrowUp") j = Math.max(0, i - 1);
  else if (e.key === "Home") j = 0;
  else if (e.key === "End") j = cards.length - 1;
  if (j !== null) {
    e.preventDefault();
    cards[j].focus();
  }
}

/** Table shortcuts (ignored while typing or while a dialog is open). */
export function onTableKey(e) {
  if (!T || !S.view?.game || e.ctrlKey || e.metaKey || e.altKey) return false;
  const k = e.key.toLowerCase();
  const lg = legal();
  if (k === "d" && lg.draw) onDraw();
  else if (k === "p" && lg.pass) onPass();
  else if (k === "u" && !T.unoBtn.hidden) onUno();
  else if (k === "c" && lg.catch.length) onCatch(lg.catch[0]);
  else if (k === "h") {
    const first = T.hand.querySelector(".hand-card.playable") || T.hand.querySelector(".hand-card");
    first?.focus();
  } else return false;
  e.preventDefault();
  return true;
}

// -- effects ------------------------------------------------------------------------------------

function restart(el, cls) {
  if (!el || reducedMotion()) return;
  el.classList.remove(cls);
  void el.offsetWidth;
  el.classList.add(cls);
  el.addEventListener("animationend", () => el.classList.remove(cls), { once: true });
}

function applyFx(fx) {
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
  T.reveal.hidden = false;
  const ms = reducedMotion() ? 3500 : 2600 + Math.min(cards.length, 20) * 140;
  T.revealTimer = setTimeout(() => {
    if (T) T.reveal.hidden = true;
  }, ms);
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
  handlePending(v);
  applyFx(fx);
  tick();
}

// A crowded table on a laptop screen (two rows of opponents, a stack bar, a player to catch, a big
// hand) pushed the hand and the key hints below the fold. When the bottom of the player's box does
// not fit the window, the table tightens step by step, each step kept while a later one is added:
// compact opponent chips in one row, smaller piles, a tighter hand box with smaller cards, then the
// turn line and the buttons in one row (ten seats and 16 cards at 1100x640 needed that). Not on
// phones and touch screens: they scroll, and keep their own whole-card layout.
const SNUG = ["snug-opps", "snug-piles", "snug-me", "snug-row"];

function fitTable() {
  if (!T) return;
  const root = T.root;
  const smaller = root.classList.contains("snug-me");
  root.classList.remove(...SNUG);
  if (smaller) fitHand(T.hand); // planned for the smaller cards
  const bottom = () => T.hand.closest(".me").getBoundingClientRect().bottom + window.scrollY;
  const fits = () => bottom() <= document.documentElement.clientHeight;
  if (!matchMedia(NO_FAN).matches && !root.classList.contains("spectating") && !fits()) {
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

export function announceTurn() {
  announce(t("ev.yourTurn"));
}
