// Shared client state and the small services every screen uses: names, the server clock,
// toasts, screen-reader announcements and sending messages.
import { h } from "./dom.js";
import { has, t } from "./i18n.js";
import { sound } from "./sound.js";

export const S = {
  code: null,
  sock: null,
  you: null,
  view: null,
  prev: null,
  version: 0,
  skew: 0, // server clock minus this browser's clock
  conn: "connecting",
  catalog: null,
  names: new Map(),
  levels: new Map(), // bot levels (the lobby view has no `level`; bot_added events and GET /api/rooms do)
  ui: {
    unoArmed: false,
    busy: 0,
    catchCool: new Map(), // player id -> until (client ms)
  },
};

const queries = new Map();
/** A media query's live list, made once: matchMedia parses the query at every call, and a patch
 * asked a few of them once per card it moved. */
export function media(query) {
  let list = queries.get(query);
  if (!list) queries.set(query, (list = window.matchMedia(query)));
  return list;
}

export const reducedMotion = () => media("(prefers-reduced-motion: reduce)").matches;

export function serverNow() {
  return Date.now() + S.skew;
}

/** Whole seconds left until a server-clock deadline (never negative). */
export function secondsLeft(deadline) {
  return Math.max(0, Math.ceil((deadline - serverNow()) / 1000));
}

export function name(id) {
  if (id === null || id === undefined) return "?";
  return S.names.get(id) || String(id);
}

export function rememberNames(view) {
  for (const p of view.players || []) S.names.set(p.id, p.name);
  for (const p of view.room?.spectators || []) S.names.set(p.id, p.name);
}

export function botLevel(p) {
  return p.level || S.levels.get(p.id) || null;
}

export function me() {
  return S.view?.players?.find((p) => p.id === S.you) || null;
}

export function isHost() {
  return S.view?.room?.host === S.you;
}

export function legal() {
  return S.view?.game?.legal || { play: [], draw: false, pass: false, choose: [], cancel: false, uno: false, catch: [] };
}

// -- toasts and announcements -------------------------------------------------------------------

export function toast(text, kind = "info", ms = 4200) {
  const box = document.getElementById("toasts");
  if (!box) return;
  const el = h("div.toast", { class: `toast-${kind}`, role: kind === "error" ? "alert" : "status" }, text);
  box.append(el);
  while (box.children.length > 3) box.firstChild.remove();
  setTimeout(() => {
    el.classList.add("out");
    setTimeout(() => el.remove(), 300);
  }, ms);
}

let announceTimer = null;
export function announce(text) {
  const el = document.getElementById("sr-announce");
  if (!el) return;
  el.textContent = "";
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => {
    el.textContent = text;
  }, 60);
}

export function errorText(answer) {
  const key = `e.${answer.code}`;
  if (has(key)) return t(key, { message: answer.message || "" });
  return t("e.generic", { message: answer.message || answer.code });
}

/** Send a message; errors become a toast (unless quiet). Resolves with the answer. */
export async function send(type, fields = {}, { quiet = false } = {}) {
  if (!S.sock) return { type: "error", code: "closed" };
  S.ui.busy += 1;
  document.body.classList.add("busy");
  try {
    const answer = await S.sock.send(type, fields);
    if (answer.type === "error" && !answer.silent && !quiet) {
      toast(errorText(answer), "error");
      sound("error");
    }
    return answer;
  } finally {
    S.ui.busy -= 1;
    if (!S.ui.busy) document.body.classList.remove("busy");
  }
}
