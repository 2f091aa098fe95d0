// What the big screen shows (tv.js opens it): the table large with the seats around it, the
// direction of play, the pile, the colour and the stack, whose turn, the last events, the scores
// and a QR code to join. Never a hand: the screen is a spectator and its view holds none.
import { cardBack, cardFace, cardName, colorName } from "./cards.js";
import { h, replace } from "./dom.js";
import { describe } from "./events.js";
import { lang, t } from "./i18n.js";
import { inviteBase, knownBase, qrSrc } from "./invite.js";
import { chatBubble } from "./chat.js";
import { avatar } from "./lobby.js";
import { clearHeadAngles, directionArrows, keepInside, place, seatAngles } from "./ring.js";

const LINES = 7;
const V = { code: null, token: null, names: new Map(), lines: [], refs: null, view: null, skew: 0, won: new Map(), chats: [] };

export function resetTv(code) {
  V.code = code;
  V.token = null;
  V.names = new Map();
  V.lines = [];
  V.refs = null;
  V.view = null;
  V.won = new Map();
}

/** The screen's token for the room (its own spectator's): the invite's addresses are a member's. */
export function tvToken(token) {
  V.token = token;
}

/** The night's record (GET .../history): matches won tonight, per player, beside the scores.
 * Returns how many matches the record has a winner for. */
export function tvNight(history) {
  V.won = new Map();
  let decided = 0;
  for (const m of history?.matches || []) {
    if (!m.winner) continue;
    decided += 1;
    V.won.set(m.winner, (V.won.get(m.winner) || 0) + 1);
  }
  if (V.view && V.refs) renderSide(V.view);
  return decided;
}

/** The view on the big screen (null before its first). */
export function tvView() {
  return V.view;
}

const nameOf = (id) => (id == null ? "?" : V.names.get(id) || String(id));

/** The events of a welcome's log and of each patch, as lines (the newest last). */
export function tvEvents(past, events, view) {
  for (const p of view.players || []) V.names.set(p.id, p.name);
  for (const p of view.room?.spectators || []) V.names.set(p.id, p.name);
  for (const ev of [...past, ...events]) {
    if ((ev.kind === "joined" || ev.kind === "bot_added") && ev.name) V.names.set(ev.player, ev.name);
    if (ev.kind === "reaction") continue;
    if (ev.kind === "chat" && !past.includes(ev)) V.chats.push(ev); // a bubble once the seats are drawn
    const d = describe(ev, nameOf, null, view.room?.host ?? null);
    if (!d || d.cls === "meta") continue;
    V.lines.push({ ev, host: view.room?.host ?? null });
  }
  V.lines.splice(0, Math.max(0, V.lines.length - LINES));
}

function build(root) {
  const seats = h("ul.tv-seats", { "aria-label": t("table.opponents") });
  const arrows = h("div.tv-arrows", { "aria-hidden": "true" });
  const center = h("div.tv-center");
  const ring = h("section.tv-ring", { "aria-label": t("tv.table") }, arrows, seats, center);
  const turn = h("p.tv-turn");
  const stack = h("p.tv-stack", { hidden: true });
  const latest = h("ol.tv-latest");
  const scores = h("ol.tv-scores");
  const scoresH = h("h2.tv-h");
  const legend = h("p.tv-legend", { hidden: true });
  const qr = h("img.tv-qr", { alt: t("lobby.qrAlt"), width: 180, height: 180, decoding: "async" });
  const joinUrl = h("code.tv-url");
  const join = h("section.tv-join", h("h2.tv-h", t("tv.join")), qr, h("p.tv-code", V.code), joinUrl);
  const side = h("aside.tv-side", turn, stack, h("section.tv-box.tv-latest-box", h("h2.tv-h", t("tv.latest")), latest),
    h("section.tv-box", scoresH, scores, legend), join);
  replace(root, h("div.tv-grid", ring, side));
  V.refs = { root, lang: lang(), seats, chips: new Map(), arrows, center, turn, stack, latest, scores, scoresH, legend, qr, joinUrl, dir: null, centerKey: null };
  inviteBase(V.code, V.token).then(() => showJoin()).catch(() => showJoin());
}

function showJoin() {
  if (!V.refs) return;
  const url = `${knownBase()?.base || location.origin}/r/${V.code}`;
  if (V.refs.qr.dataset.url !== url) {
    V.refs.qr.dataset.url = url;
    V.refs.qr.src = qrSrc(url);
  }
  V.refs.joinUrl.textContent = url.replace(/^https?:\/\//, "");
}

export function renderTv(view, info = {}) {
  const root = document.getElementById("tv");
  if (!root) return;
  if (typeof info.now === "number") V.skew = info.now - Date.now();
  V.view = view;
  if (!V.refs || V.refs.root !== root || !root.contains(V.refs.seats) || V.refs.lang !== lang()) build(root);
  const status = view.room.status;
  document.body.dataset.status = status;
  document.body.dataset.version = String(info.version ?? 0);
  root.dataset.status = status;
  renderSeats(view);
  for (const ev of V.chats.splice(0)) chatBubble(V.refs.chips.get(ev.player)?.li, t(`chat.${ev.phrase}`));
  renderCenter(view);
  renderSide(view);
}

/** What is placed from the laid-out page, once the frame's layout is done. */
function fitLater() {
  cancelAnimationFrame(V.fitFrame);
  V.fitFrame = requestAnimationFrame(() => {
    fitArrows();
    fitLatest();
  });
}

window.addEventListener("resize", fitLater);

/** The latest events as whole lines: the oldest that do not fit the box are left out (the box
 * kept its newest lines at its foot and cut the top one in half across it). */
function fitLatest() {
  const list = V.refs?.latest;
  if (!list || !list.isConnected) return;
  const lines = [...list.children];
  for (const li of lines) li.hidden = false;
  const top = list.getBoundingClientRect().top - 0.5;
  for (const li of lines.slice(0, -1)) { // the newest line shows, whatever it costs
    if (li.getBoundingClientRect().top >= top) break;
    li.hidden = true;
  }
}

/** The arrowheads where no seat or sign hides them (ring.js), once the frame's layout is done. */
function fitArrows() {
  const R = V.refs;
  if (!R || !R.arrows.isConnected || R.arrows.hidden) return;
  const box = R.arrows.getBoundingClientRect();
  if (!box.width || !box.height) return;
  const rects = [...R.chips.values()].map((c) => c.li.getBoundingClientRect());
  for (const el of R.center.children) rects.push(el.getBoundingClientRect());
  const angles = clearHeadAngles(box, rects);
  if (R.headAngles && R.headAngles.join() === angles.join()) return;
  R.headAngles = angles;
  replace(R.arrows, directionArrows(R.dir ?? 1, angles));
}

function turnOf(g) {
  if (!g || g.winner) return null;
  return g.pending ? g.pending.player : g.turn;
}

function renderSeats(view) {
  const R = V.refs;
  const g = view.game;
  const players = view.players || [];
  const angles = seatAngles(players.length);
  const seen = new Set();
  players.forEach((p, i) => {
    let c = R.chips.get(p.id);
    if (!c) {
      c = { li: h("li.tv-seat", { "data-player": p.id }), name: h("span.tv-name"), count: h("span.tv-count"), badges: h("span.tv-badges") };
      c.li.append(avatar(p), h("span.tv-who", c.name, c.badges), c.count);
      R.chips.set(p.id, c);
    }
    c.name.textContent = p.name;
    const inGame = g && view.room.status !== "lobby";
    const turn = turnOf(g) === p.id;
    c.li.classList.toggle("turn", turn);
    c.li.classList.toggle("target", !!(g && g.stack && g.stack.target === p.id && !g.winner));
    c.li.classList.toggle("out", !!p.eliminated);
    c.li.classList.toggle("winner", !!(g && g.winner === p.id));
    c.li.classList.toggle("offline", !p.connected);
    c.li.classList.toggle("away", !!p.away);
    const badges = [];
    if (p.away) badges.push(h("span.flag.flag-away", t("table.away")));
    else if (!p.connected) badges.push(h("span.flag.flag-away", t("offline")));
    if (inGame && g.dealer === p.id) badges.push(h("span.badge.badge-dealer", t("table.dealer")));
    if (p.eliminated) badges.push(h("span.flag.flag-out", t("table.eliminated")));
    else if (p.uno) badges.push(h("span.flag.flag-uno", "UNO"));
    if (inGame && g.stack && g.stack.target === p.id && !g.winner) badges.push(h("span.flag.flag-stack", `+${g.stack.total}`));
    replace(c.badges, badges);
    replace(c.count, inGame ? [cardBack({ size: "xs" }), h("b", String(p.cards))] : []);
    c.count.setAttribute("aria-label", inGame ? t("table.cards", { n: p.cards }) : "");
    place(c.li, angles[i], 44, 42);
    if (R.seats.children[i] !== c.li) R.seats.insertBefore(c.li, R.seats.children[i] || null);
    seen.add(p.id);
  });
  for (const [id, c] of R.chips) {
    if (!seen.has(id)) {
      c.li.remove();
      R.chips.delete(id);
    }
  }
  R.seats.dataset.count = String(players.length);
  keepInside(document.getElementById("tv"), [...R.chips.values()].map((c) => c.li));
}

function renderCenter(view) {
  const R = V.refs;
  const g = view.game;
  const status = view.room.status;
  const dir = g ? g.direction : 1;
  if (R.dir !== dir) {
    const flipped = R.dir !== null && R.arrows.firstElementChild;
    replace(R.arrows, directionArrows(dir, R.headAngles));
    if (flipped && !matchMedia("(prefers-reduced-motion: reduce)").matches) {
      R.arrows.firstElementChild.animate([{ transform: "scaleX(-1)", opacity: 0.4 }, { transform: "none", opacity: 1 }],
        { duration: 450, easing: "ease-out" });
    }
    R.dir = dir;
  }
  R.arrows.hidden = status === "lobby";
  let key;
  let parts;
  if (status === "lobby" || !g) {
    const host = (view.players || []).find((p) => p.id === view.room.host);
    key = `lobby:${host?.name}:${lang()}`;
    parts = [h("p.tv-wait", t("tv.waiting", { name: host ? host.name : "?" })), h("p.tv-hint", t("tv.joinHint"))];
  } else if (g.winner) {
    const match = status === "match_over";
    key = `over:${view.room.round}:${status}:${g.winner}:${lang()}`;
    parts = [h("p.tv-kicker", t(match ? "over.match" : "over.round", { n: view.room.round })),
      h("p.tv-winner", t(match ? "over.winsMatch" : "over.winsRound", { name: nameOf(g.winner) })),
      view.room.rules.scoring ? h("p.tv-points", t("over.points", { n: g.points ?? 0 })) : null];
  } else {
    key = `play:${g.top}:${g.color}:${g.draw_pile}:${g.discard_pile}:${dir}:${lang()}`;
    const top = cardFace(g.top, { size: "xl" });
    top.setAttribute("aria-label", t("table.discard", { card: cardName(g.top), color: colorName(g.color) }));
    parts = [h("div.tv-piles",
      h("div.tv-pile", cardBack({ size: "xl" }), h("span.tv-pile-n", t("table.drawPile", { n: g.draw_pile }))),
      h("div.tv-discard", { class: `ring-${g.color[0]}` }, top)),
    h("p.tv-color", h("span.swatch", { class: `sw-${g.color[0]}`, "aria-hidden": "true" }, t(`letter.${g.color[0]}`)),
      ` ${colorName(g.color)} · ${t(`table.direction.${dir}`)}`)];
  }
  if (R.centerKey !== key) {
    replace(R.center, parts);
    R.centerKey = key;
  }
}

function renderSide(view) {
  const R = V.refs;
  const g = view.game;
  const who = turnOf(g);
  const status = view.room.status;
  if (status === "playing" && who) {
    const text = g.pending ? t("table.choosing", { name: nameOf(who) }) : t("table.turnOf", { name: nameOf(who) });
    R.turn.textContent = text;
    R.turn.dataset.deadline = g.turn_deadline && view.room.rules.turn_timer_s ? String(g.turn_deadline) : "";
  } else {
    R.turn.textContent = t(status === "lobby" ? "tv.lobby" : status === "match_over" ? "tv.matchOver" : "tv.roundOver");
    R.turn.dataset.deadline = "";
  }
  const s = status === "playing" && g?.stack;
  R.stack.hidden = !s;
  if (s) R.stack.textContent = t("table.stackOn", { total: s.total, last: s.last, name: nameOf(s.target) });
  replace(R.latest, V.lines.map((line) => {
    const d = describe(line.ev, nameOf, null, line.host);
    if (!d) return null;
    const cards = (d.cards || []).slice(0, 12);
    return h("li", { class: d.cls || "" }, cards.length ? h("span.log-cards", { "aria-hidden": "true" }, cards.map((c) => cardFace(c, { size: "xs" }))) : null,
      h("span.log-text", d.text));
  }));
  const rules = view.room.rules;
  R.scoresH.textContent = rules.scoring ? t("tv.scores", { target: rules.target_score, round: view.room.round }) : t("tv.players");
  const rows = [...(view.players || [])].sort((a, b) => (rules.scoring ? b.score - a.score : 0));
  const won = V.won;
  replace(R.scores, rows.map((p) => h("li", { "data-player": p.id, class: g && g.winner === p.id ? "win" : "" },
    h("span.tv-score-name", p.name,
      won.get(p.id) ? h("span.tv-won", { title: t("tv.matchesWon", { n: won.get(p.id) }) }, `★ ${won.get(p.id)}`) : null),
    rules.scoring ? h("b.tv-score", String(p.score)) : null)));
  R.legend.hidden = !won.size;
  R.legend.textContent = won.size ? t("tv.wonLegend") : "";
  tvTick();
  fitLater();
}

/** The turn's seconds left, kept current between patches. */
export function tvTick() {
  const el = V.refs?.turn;
  if (!el || !el.dataset.deadline) {
    el?.removeAttribute("data-left");
    return;
  }
  const left = Math.max(0, Math.ceil((Number(el.dataset.deadline) - (Date.now() + V.skew)) / 1000));
  el.dataset.left = t("table.secondsLeft", { s: left });
}
