// Choices the server waits for (game.pending): the same dialogs as a play's inline questions,
// answered with `choose`; a dialog the game moved past is closed.
import { S, legal, name, send } from "../core.js";
import { askColor, askTarget, askTop, closeDialog, dialogKey } from "../dialogs.js";
import { t } from "../i18n.js";

export const CLOSED = "\u0000closed"; // a dialog closed because the game moved on (not the user's cancel)

function lastRouletteBy() {
  return S.lastPlay && S.lastPlay.card === "w-roulette" ? S.lastPlay.player : null;
}

async function askPending(p, g, lg, key) {
  const deadline = g.turn_deadline;
  let value;
  let field = "color";
  if (p.choice === "color") {
    value = await askColor({ key, card: p.card, cancel: lg.cancel, deadline, later: true });
  } else if (p.choice === "roulette_color") {
    const by = lastRouletteBy();
    value = await askColor({ key, cancel: false, deadline, later: true, title: t("dlg.roulette.title"),
      desc: t("dlg.roulette.d", { name: by ? name(by) : "?" }) });
  } else if (p.choice === "target") {
    field = "target";
    value = await askTarget({ key, targets: lg.choose, deadline, cancel: lg.cancel, later: true });
  } else if (p.choice === "top") {
    field = "top";
    value = await askTop({ key, cards: lg.choose, deadline, later: true });
  }
  if (value === CLOSED) return;
  if (value === null) {
    if (lg.cancel) await send("cancel");
    return;
  }
  const answer = await send("choose", { [field]: value });
  if (answer.type === "error") S.rerender?.();
}

export function handlePending(v) {
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
