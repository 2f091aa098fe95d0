// The opponents' chips, one per seat in play order from the player's left: name, badges, cards left
// against the mercy limit, UNO and stack flags, turn timer and the button to catch them.
import { S, botLevel, legal, media, reducedMotion, secondsLeft } from "../core.js";
import { h, replace, setAttr, setHidden, setText } from "../dom.js";
import { t } from "../i18n.js";
import { avatar } from "../lobby.js";
import { botPlaysButton } from "../members.js";
import { clearHeadAngles, directionArrows } from "../ring.js";
import { onCatch } from "./actions.js";
import { T } from "./state.js";

/** A phone's ring: one row of up to three across the top, the others in narrow columns beside
 * the piles (ring.css). */
export const PHONE_RING = "(max-width: 600px)";
/** A phone on its side (ring.css): the seats in one strip over the piles and the hand, side by
 * side below it, the whole table in one screen. */
export const SHORT_WIDE = "(orientation: landscape) and (max-height: 500px)";
for (const q of [PHONE_RING, SHORT_WIDE]) matchMedia(q).addEventListener("change", () => S.rerender?.());

function seatOrder(players) {
  const i = players.findIndex((p) => p.id === S.you);
  if (i < 0) return players;
  return [...players.slice(i + 1), ...players.slice(0, i)];
}

function makeChip(p) {
  const c = {};
  c.li = h("li.opp", { "data-player": p.id });
  c.av = avatar(p);
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
  c.li.classList.toggle("bot", !!p.bot); // a phone shows no other badge (style.css)
  c.li.classList.toggle("away", !!p.away);
  // the chip's words and badges only when something they show changed: built again on every patch,
  // they were new elements to style and lay out each time
  const level = p.bot ? botLevel(p) : null;
  const stackOn = g && g.stack && g.stack.target === p.id && !g.winner ? g.stack.total : 0;
  const sig = [p.name, level, v.room.host === p.id, g?.dealer === p.id, rules.scoring ? p.score : 0, p.connected,
    p.cards, limit, p.eliminated, p.uno, stackOn, p.away, offerBot(p, v)].join("|");
  if (c.sig !== sig) {
    c.sig = sig;
    drawChip(c, p, v, level, stackOn);
  }
  timerAndCatch(c, p, v, turn);
}

function drawChip(c, p, v, level, stackOn) {
  const g = v.game;
  const rules = v.room.rules;
  const limit = rules.mercy_limit;
  // word by word: where the chip keeps a second line, a word that does not fit beside the one
  // before it goes under it, and a word longer than the line is cut with an ellipsis (style.css);
  // letting the browser break it anywhere read "Alexa / ndri…"
  if (c.nameShown !== p.name) {
    c.nameShown = p.name;
    replace(c.name, p.name.split(/(?<=\s)/).map((word) => h("span.w", word)));
  }
  setAttr(c.name, "title", p.name); // a narrow seat cuts a long name: the whole one on hover
  // each part built again only when what it shows changed (a play changes the count alone)
  const badgeSig = [level, v.room.host === p.id, g?.dealer === p.id, rules.scoring ? p.score : 0].join("|");
  if (c.badgeSig !== badgeSig) {
    c.badgeSig = badgeSig;
    drawBadges(c, p, v, level);
    // the dealer's avatar wears the word's initial (style.css): as a badge it took a line of its own
    if (g?.dealer === p.id) {
      c.av.dataset.dealer = t("table.dealer").slice(0, 1);
      c.av.title = t("table.dealer");
    } else {
      delete c.av.dataset.dealer;
      c.av.removeAttribute("title");
    }
  }
  c.dot.className = `dot ${p.connected ? "on" : "off"}`;
  setAttr(c.dot, "aria-label", t(p.connected ? "online" : "table.disconnected"));
  c.dot.title = t(p.connected ? "online" : "table.disconnected");
  const n = p.cards;
  replace(c.count, h("b", String(n)), h("span.sr-only", ` ${n === 1 ? t("table.card1").replace(/^1\s*/, "") : t("unit.cards")}`));
  const pct = Math.min(100, Math.round((n / limit) * 100));
  c.fill.style.width = `${pct}%`;
  c.meter.className = `meter${pct >= 80 ? " danger" : pct >= 56 ? " warn" : ""}`;
  c.meter.setAttribute("aria-valuenow", String(n));
  setAttr(c.meter, "aria-valuemax", String(limit));
  c.meter.setAttribute("aria-label", t("table.mercy", { n, max: limit }));
  c.meter.title = t("table.mercy", { n, max: limit });
  const statusSig = [p.eliminated, p.uno, stackOn, p.away, offerBot(p, v)].join("|");
  if (c.statusSig === statusSig) return;
  c.statusSig = statusSig;
  const status = [];
  // a person whose seat a bot plays until they are back; the host may hand a dropped one on now
  if (p.away) status.push(h("span.flag.flag-away", { title: t("table.awayLong", { name: p.name }) }, t("table.away")));
  else if (offerBot(p, v)) status.push(botPlaysButton(p));
  if (p.eliminated) status.push(h("span.flag.flag-out", { title: t("table.eliminatedLong") }, t("table.eliminated")));
  else if (p.uno) status.push(h("span.flag.flag-uno", "UNO"));
  if (stackOn) status.push(h("span.flag.flag-stack", `+${stackOn}`));
  replace(c.status, status);
}

/** The host sees "Bot plays" on a disconnected person's seat while a round is on. */
function offerBot(p, v) {
  return !p.bot && !p.connected && !p.eliminated && v.room.host === S.you && v.room.status === "playing";
}

function drawBadges(c, p, v, level) {
  const g = v.game;
  const rules = v.room.rules;
  const badges = [];
  if (p.bot && !p.away) {
    badges.push(h("span.badge.badge-bot", { class: level ? `level-${level}` : "", "data-level": level || "" },
      level ? [h("span.bb-prefix", `${t("lobby.botTag")} · `), t(`level.${level}`)] : t("lobby.botTag")));
  }
  if (v.room.host === p.id) badges.push(h("span.badge.badge-host", t("lobby.host")));
  if (g && g.dealer === p.id) badges.push(h("span.badge.badge-dealer.sr-only", t("table.dealer"))); // shown as the avatar's disc
  if (rules.scoring && p.score) badges.push(h("span.badge.badge-score", t("table.score", { n: p.score })));
  replace(c.badges, badges);
  // its name may take their line (the dealer's is a disc on the avatar, style.css)
  c.li.classList.toggle("no-badges", !badges.some((b) => !b.classList.contains("badge-dealer")));
}

function timerAndCatch(c, p, v, turn) {
  const g = v.game;
  const rules = v.room.rules;
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
    setHidden(c.catchBtn, true);
    delete c.catchBtn.dataset.deadline;
  }
  c.li.classList.toggle("exposed", !!exposed);
}

export function renderOpponents(v) {
  const list = seatOrder(v.players).filter((p) => p.id !== S.you);
  const seen = new Set();
  const sides = ringSides(list.length);
  const where = (i) => (i < sides ? T.seats.left : i >= list.length - sides ? T.seats.right : T.seats.top);
  const index = (i) => (i < sides ? i : i >= list.length - sides ? i - (list.length - sides) : i - sides);
  list.forEach((p, i) => {
    let c = T.chips.get(p.id);
    if (!c) {
      c = makeChip(p);
      T.chips.set(p.id, c);
    }
    updateChip(c, p, v);
    c.li.classList.toggle("target", !!(v.game?.stack && v.game.stack.target === p.id && !v.game.winner));
    const ul = where(i);
    const at = index(i);
    if (ul.children[at] !== c.li) ul.insertBefore(c.li, ul.children[at] || null);
    seen.add(p.id);
  });
  for (const [id, c] of T.chips) {
    if (!seen.has(id)) {
      c.li.remove();
      T.chips.delete(id);
    }
  }
  arc(T.seats.top);
  // style.css: chips keep a line for badges, and a long name may take it, when some seat shows any
  setAttr(T.opponents, "data-bots", list.some((p) => p.bot) ? "some" : "none");
  setAttr(T.opponents, "data-badges", [...T.chips.values()].some((c) => !c.li.classList.contains("no-badges")) ? "some" : "none");
  if (!T.ringFit) {
    // the ring's boxes lay out after this; a change of their size moves the heads, never a patch
    T.ringFit = new ResizeObserver(fitArrows);
    for (const el of [T.opponents, T.seats.top, T.seats.left, T.seats.right, T.opponents.querySelector(".center")]) {
      T.ringFit.observe(el);
    }
  }
  setAttr(T.opponents, "data-count", String(list.length));
  setAttr(T.opponents, "data-sides", String(sides));
  const dir = v.game?.direction ?? 1;
  if (T.arrowsDir !== dir) {
    const flip = T.arrowsDir !== null;
    replace(T.arrows, directionArrows(dir, T.headAngles));
    T.arrowsDir = dir;
    if (flip && !reducedMotion()) {
      T.arrows.firstElementChild.animate([{ transform: "scaleX(-1)", opacity: 0.3 }, { transform: "none", opacity: 1 }],
        { duration: 450, easing: "ease-out" });
    }
  }
}

/** How many opponents sit on each side of the piles (the rest across the top). On a phone the
 * top holds one row of up to three, the sides the rest, so play still goes round: up the left,
 * across the top, down the right; on a phone on its side every seat is in the strip. */
export function ringSides(n) {
  if (media(SHORT_WIDE).matches) return 0;
  if (media(PHONE_RING).matches) return n <= 3 ? 0 : Math.ceil((n - 3) / 2);
  if (n <= 2) return 0;
  return n <= 6 ? 1 : 2;
}

/** The top row bends like the far side of an oval: its outer seats sit a little lower. */
function arc(ul) {
  const chips = [...ul.children];
  const mid = (chips.length - 1) / 2;
  chips.forEach((li, i) => {
    const d = mid ? Math.abs(i - mid) / mid : 0;
    const lift = `${Math.round(d * d * 14)}px`;
    if (li.style.getPropertyValue("--lift") !== lift) li.style.setProperty("--lift", lift);
  });
}

/** The arrowheads of the direction of play where no seat, pile or sign hides them (ring.js):
 * run by a ResizeObserver, after layout, so reading the boxes costs no extra layout. */
function fitArrows() {
  if (!T || !T.arrows.isConnected) return;
  const box = T.arrows.getBoundingClientRect();
  if (!box.width || !box.height) return;
  const rects = [...T.chips.values()].map((c) => c.li.getBoundingClientRect());
  for (const el of T.opponents.querySelector(".center").children) rects.push(el.getBoundingClientRect());
  const angles = clearHeadAngles(box, rects);
  const key = angles.join();
  if (T.headAngles && key === T.headAngles.join()) return;
  T.headAngles = angles;
  replace(T.arrows, directionArrows(T.arrowsDir ?? 1, angles));
}
