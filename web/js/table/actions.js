// What the player does at the table: play a card (asking a wild's colour or a 7's target first),
// draw or take the stack, pass, UNO, catch, react, and the keyboard in the hand and at the table.
// A play shows at once: the card leaves the hand for the pile as it is tapped, and the server's
// answer settles it (its patch) or takes it back (its error: the card returns to its place).
import { parse } from "../cards.js";
import { S, legal, reducedMotion, send, toast } from "../core.js";
import { askColor, askTarget } from "../dialogs.js";
import { releasePointerFocus } from "../dom.js";
import { t } from "../i18n.js";
import { sound } from "../sound.js";
import { CLOSED } from "./choices.js";
import { arrive } from "./motion.js";
import { isMyTurn, T } from "./state.js";

const CATCH_COOLDOWN_MS = 1500;

// "off" in localStorage: a play waits for the server's patch before it shows, as it did before
// (bench/tap_latency.py measures the two side by side)
const SHOW_AT_ONCE = localStorage.getItem("mercyless.optimistic") !== "off";
const NOTHING = { play: [], draw: false, pass: false, choose: [], cancel: false, uno: false, catch: [] };

let pending = null; // the play shown before the server's answer: {card, color, sock, unoArmed}
let lastView = null; // the server's latest view (the one shown, less the pending play)

/** Whether a play of this player waits for the server's answer (shown already). */
export function playPending() {
  return pending !== null;
}

/**
 * The view to show for the server's `view`: while a play waits for its answer, that card is out
 * of the hand (and the player's count) and on the pile, and there is nothing else to do until the
 * answer comes. The server's view itself is never changed.
 */
export function shownView(view) {
  lastView = view;
  const g = view?.game;
  const i = pending && g ? (view.hand || []).indexOf(pending.card) : -1;
  if (i < 0) return view; // no play waits, or the server's view already has it played
  const hand = view.hand.slice();
  hand.splice(i, 1);
  return {
    ...view, hand,
    players: view.players.map((p) => (p.id === S.you ? { ...p, cards: p.cards - 1 } : p)),
    game: { ...g, top: pending.card, color: pending.color, discard_pile: g.discard_pile + 1, legal: NOTHING, drawn: null },
  };
}

/** The patch's `played` event that settles the pending play, if it has one (the play then is the
 * server's: nothing to take back, no second flight to the pile, no second sound). */
export function confirmPlay(events) {
  if (!pending) return null;
  const ev = events.find((e) => e.kind === "played" && e.player === S.you && e.card === pending.card) || null;
  if (ev) pending = null;
  return ev;
}

/** The tapped card leaves the hand for the pile now, before the server has it. */
function showPlay(card, btn, color) {
  releasePointerFocus(T.root); // before anything changes (dom.js: a later let-go lays the page out)
  // the places are read before anything is drawn anew: one read, none after the change
  const from = btn.isConnected ? btn.getBoundingClientRect() : null;
  const to = T.discard.firstElementChild?.getBoundingClientRect() || null;
  const kind = parse(card).color;
  pending = { card, color: color || (kind === "wild" ? S.view.game.color : kind), sock: S.sock, unoArmed: S.ui.unoArmed };
  const shown = shownView(S.view);
  if (shown === S.view) {
    pending = null; // the card left the hand meanwhile (a colour asked first): the server judges
    return;
  }
  S.view = shown;
  S.rerender?.();
  const top = T?.discard.firstElementChild;
  if (top && to) arrive(top, from, { turn: -20, to });
  sound("play");
}

/** The server's answer came and no patch settled the play: an ack (a reconnect's welcome had the
 * play already) shows the server's view; a refusal, or a play never sent, takes the card back
 * to where it was in the hand. */
function settle(answer) {
  const was = pending;
  pending = null;
  if (!was || was.sock !== S.sock || !lastView || !T) return;
  const pile = T.discard.getBoundingClientRect();
  S.view = lastView;
  if (answer?.type !== "ack") S.ui.unoArmed = was.unoArmed; // the hand of two is back: so is the UNO call
  S.rerender?.();
  if (answer?.type === "ack") return;
  // a refusal says why (core.js send); a play the connection lost before it went, here
  if (answer?.code === "stale") toast(t("table.playNotSent"), "error");
  const back = [...T.hand.querySelectorAll(`.hand-card[data-card="${CSS.escape(was.card)}"]`)].pop();
  if (back) arrive(back, pile, { scale: 0.7, duration: 260 });
}

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

export async function onCard(code, btn) {
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
  // on its way first (send writes to the socket before it waits): the server works on it while
  // the page draws it
  const answering = send("play", fields);
  if (SHOW_AT_ONCE) showPlay(code, btn, fields.color);
  let answer = null;
  try {
    answer = await answering;
    if (answer.type === "ack") S.ui.unoArmed = false;
  } finally {
    S.ui.playing = false;
    if (pending) settle(answer);
  }
}

export async function onDraw() {
  const lg = legal();
  if (!lg.draw) {
    shake(T?.pileBtn);
    return;
  }
  await send("draw");
}

export async function onPass() {
  if (legal().pass) await send("pass");
}

export async function onUno() {
  const lg = legal();
  if (lg.uno) {
    await send("uno");
    return;
  }
  S.ui.unoArmed = !S.ui.unoArmed;
  if (S.ui.unoArmed) sound("uno");
  S.rerender?.();
}

export async function onCatch(id) {
  const until = S.ui.catchCool.get(id) || 0;
  if (until > Date.now()) return;
  S.ui.catchCool.set(id, Date.now() + CATCH_COOLDOWN_MS);
  const c = T?.chips.get(id);
  if (c) c.catchBtn.disabled = true;
  setTimeout(() => S.rerender?.(), CATCH_COOLDOWN_MS + 20);
  await send("catch", { target: id });
}

export async function onReact(reaction, btn) {
  const box = btn.closest(".reactions");
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  setTimeout(() => {
    for (const b of box.querySelectorAll("button")) b.disabled = false;
  }, 1100);
  btn.closest("details").open = false;
  await send("react", { reaction });
}

export function onHandKey(e) {
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
