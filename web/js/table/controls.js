// Above the hand: whose turn it is and its timer, the buttons the server allows now (take the
// stack, draw, pass, UNO) and the warning that the player can be caught.
import { S, legal, me, name, secondsLeft } from "../core.js";
import { setAttr, setHidden, setText } from "../dom.js";
import { t } from "../i18n.js";
import { isMyTurn, T } from "./state.js";

export function renderTurn(v) {
  const g = v.game;
  const rules = v.room.rules;
  if (g.winner) {
    setText(T.turnText, "");
    setText(T.turnSecs, "");
    T.turnBar.hidden = true;
    setAttr(T.root, "data-turn", "none");
    return;
  }
  const mine = isMyTurn(g);
  setAttr(T.root, "data-turn", mine ? "me" : "other");
  let text;
  if (g.pending && g.pending.player !== S.you) text = t("table.choosing", { name: name(g.pending.player) });
  else if (mine) text = t("table.yourTurn");
  else text = t("table.turnOf", { name: name(g.turn) });
  setText(T.turnText, text);
  T.turnText.parentElement.classList.toggle("mine", mine);
  if (g.turn_deadline && rules.turn_timer_s) {
    T.turnBar.hidden = false;
    T.turnBar.dataset.deadline = g.turn_deadline;
    T.turnBar.dataset.total = rules.turn_timer_s * 1000;
    T.turnSecs.dataset.deadline = g.turn_deadline;
    T.turnSecs.dataset.fmt = "table.secondsLeft";
    setText(T.turnSecs, t("table.secondsLeft", { s: secondsLeft(g.turn_deadline) }));
  } else {
    T.turnBar.hidden = true;
    delete T.turnSecs.dataset.deadline;
    setText(T.turnSecs, "");
  }
}

export function renderControls(v) {
  const g = v.game;
  const lg = legal();
  const over = !!g.winner;
  const stackOnMe = g.stack && g.stack.target === S.you && !over;
  setHidden(T.takeBtn, !(stackOnMe && lg.draw));
  setText(T.takeBtn, stackOnMe ? t("table.take", { n: g.stack.total }) : "");
  setHidden(T.drawBtn, !(lg.draw && !stackOnMe) || over);
  setHidden(T.passBtn, !lg.pass || over);
  const hand = v.hand || [];
  const meP = me();
  T.unoFlag.hidden = !(meP && meP.uno && !over);
  const exposed = (g.exposed || []).find((e) => e.player === S.you);
  if (lg.uno && !over) {
    setHidden(T.unoBtn, false);
    setText(T.unoBtn, t("table.unoCall"));
    T.unoBtn.removeAttribute("aria-pressed");
    // it pulses only while someone can catch you (one card reached by a 0 or a 7 cannot be)
    T.unoBtn.classList.toggle("urgent", !!exposed);
  } else if (hand.length === 2 && isMyTurn(g) && lg.play.length && !over) {
    setHidden(T.unoBtn, false);
    T.unoBtn.classList.remove("urgent");
    setAttr(T.unoBtn, "aria-pressed", String(S.ui.unoArmed));
    setText(T.unoBtn, S.ui.unoArmed ? `✓ ${t("table.unoArmed")}` : t("table.unoArm"));
  } else {
    setHidden(T.unoBtn, true);
  }
  if (exposed && !over) {
    T.exposedMe.hidden = false;
    T.exposedMe.dataset.deadline = exposed.until;
    T.exposedMe.dataset.fmt = "table.exposedYou";
    setText(T.exposedMe, t("table.exposedYou", { s: secondsLeft(exposed.until) }));
  } else {
    T.exposedMe.hidden = true;
    delete T.exposedMe.dataset.deadline;
  }
}
