// What the player does at the table: play a card (asking a wild's colour or a 7's target first),
// draw or take the stack, pass, UNO, catch, react, and the keyboard in the hand and at the table.
import { parse } from "../cards.js";
import { S, legal, reducedMotion, send, toast } from "../core.js";
import { askColor, askTarget } from "../dialogs.js";
import { t } from "../i18n.js";
import { sound } from "../sound.js";
import { CLOSED } from "./choices.js";
import { isMyTurn, T } from "./state.js";

const CATCH_COOLDOWN_MS = 1500;

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
  try {
    const answer = await send("play", fields);
    if (answer.type === "ack") S.ui.unoArmed = false;
  } finally {
    S.ui.playing = false;
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
