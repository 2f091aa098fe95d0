// Quick chat (issue #47): a few fixed phrases, sent as ids (the server knows no words) and said to
// each reader in their own language: a bubble on the sender's seat and a line in the log. The menu
// sits beside React at the table and under the seats in the lobby; a player the host muted sees
// it closed, with why.
import { S, send } from "./core.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { T } from "./table/state.js";

/** The server's CHAT_PHRASES (app/core/protocol.py), in the menu's order. */
export const PHRASES = ["hi_all", "your_turn", "nice_one", "no_mercy", "wait_for_me", "gg", "one_more_round", "sorry",
  "brb", "so_close"];
// the server's CHAT_INTERVAL_MS default: the buttons rest as long, so a second tap is not refused
const REST_MS = 2000;
const BUBBLE_MS = 3600;
let restUntil = 0;

export function isMuted(id = S.you) {
  return !!S.view?.room?.muted?.includes(id);
}

/** The Chat button and its menu of phrases (kept current by syncChat). */
export function chatMenu() {
  const note = h("p.chat-muted-note", { hidden: true }, t("chat.mutedNote"));
  const menu = h("details.react-menu.chat-menu",
    h("summary", { "data-key": "chat-menu" }, t("chat.label")),
    h("div.reactions.chat-phrases", { role: "group", "aria-label": t("chat.label") }, note,
      PHRASES.map((id) => h("button.react.chat-phrase", { type: "button", "data-key": `chat:${id}`, "data-phrase": id,
        onclick: () => say(id, menu) }, t(`chat.${id}`)))));
  syncMenu(menu);
  return menu;
}

async function say(phrase, menu) {
  menu.open = false;
  restUntil = Date.now() + REST_MS;
  syncChat();
  setTimeout(syncChat, REST_MS + 20);
  await send("chat", { phrase });
}

function syncMenu(menu) {
  const muted = isMuted();
  const resting = Date.now() < restUntil;
  menu.classList.toggle("is-muted", muted);
  menu.querySelector(".chat-muted-note").hidden = !muted;
  for (const b of menu.querySelectorAll(".chat-phrase")) {
    b.disabled = muted || resting;
    b.hidden = muted;
  }
}

/** Every chat menu on the page, as the view has it (a mute, the rest after a phrase). */
export function syncChat() {
  for (const menu of document.querySelectorAll(".chat-menu")) syncMenu(menu);
}

/** A bubble over `el` (the reaction's look and place), gone after a while. */
export function chatBubble(el, text) {
  if (!el) return;
  const b = h("span.bubble.chat-bubble", { "aria-hidden": "true" }, text);
  el.append(b);
  setTimeout(() => b.remove(), BUBBLE_MS);
}

/** The seat (or the spectator's chip) a phrase came from, on the page as drawn now. */
function seatOf(id) {
  if (id === S.you && T?.mine?.isConnected && T.mine.offsetParent) return T.mine;
  const stage = document.getElementById("stage");
  return stage?.querySelector(`.opp[data-player="${CSS.escape(id)}"], .seat[data-player="${CSS.escape(id)}"], `
    + `.spectator[data-player="${CSS.escape(id)}"]`) || null;
}

/** A patch's phrases as bubbles (a welcome's past ones are only log lines). */
export function showChats(events, welcome) {
  if (welcome) return;
  for (const ev of events) if (ev.kind === "chat") chatBubble(seatOf(ev.player), t(`chat.${ev.phrase}`));
}
