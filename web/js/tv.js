// The big screen (/tv/CODE): a room watched from a TV or a laptop in the middle of the room. It
// joins as a *screen* spectator (POST /api/rooms/CODE/watch, docs/server.md): its token is its
// own, kept apart from the players' seats, so it never holds a player's token and sees only what
// a spectator sees (no hand). It reconnects forever: a dropped socket backs off and tries again,
// a revoked token (the host removed the screen) watches anew, a refused watch (a locked room)
// is tried again every half minute.
import { refreshFaces } from "./card-art.js";
import { h, replace } from "./dom.js";
import { t } from "./i18n.js";
import { Api, ApiError, RoomSocket } from "./net.js";
import { app, brand, langSelect, settingsButton, shellParts } from "./shell.js";
import { tvMoments } from "./moments.js";
import { tvStory } from "./story.js";
import { renderTv, resetTv, tvEvents, tvNight, tvTick, tvToken } from "./tv-view.js";

const KEY = "mercyless.screens";
const RETRY_MS = 30000;

const NIGHT_RETRY_MS = 1500; // a finished match reaches the record a moment after the view
const NIGHT_TRIES = 6;

const screen = { code: null, sock: null, timer: null, tick: null, status: null, decided: 0, night: null };

function stored() {
  try {
    return JSON.parse(localStorage.getItem(KEY) || "{}");
  } catch {
    return {};
  }
}

function keep(code, cred) {
  const all = stored();
  if (cred) all[code] = cred.token ? { player_id: cred.player_id, token: cred.token, at: Date.now() } : cred;
  else delete all[code];
  localStorage.setItem(KEY, JSON.stringify(all));
}

// ``revoked``: the token this screen held until the host removed it. The next watch names it, so
// a removed screen stays out (the server bars a screen by its token), while any other screen,
// the living room's own at the host's address too, still comes in.
async function watch(code, revoked) {
  const res = await fetch(`/api/rooms/${encodeURIComponent(code)}/watch`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify(revoked ? { token: revoked } : {}) });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, data?.error?.code || "http_error", data?.error?.message || "");
  return data;
}

function status(key, params = {}) {
  const el = document.getElementById("tv-status");
  if (!el) return;
  el.hidden = !key;
  el.textContent = key ? t(key, params) : "";
}

function shell(code) {
  document.body.dataset.screen = "tv";
  refreshFaces(); // its cards are larger (tv.css --card-art-w)
  const full = h("button.btn.ghost.small.tv-full", { type: "button", onclick: () => {
    if (document.fullscreenElement) document.exitFullscreen?.();
    else document.documentElement.requestFullscreen?.().catch(() => {});
  } }, t("tv.fullscreen"));
  replace(app,
    h("header.topbar.tv-bar", brand(true), h("span.tv-title", t("tv.title")),
      h("div.top-actions", langSelect(), settingsButton(), full)),
    h("p#tv-status.tv-status", { role: "status", hidden: true }),
    h("main#tv.tv", { "data-code": code, "aria-live": "off" }),
    ...shellParts());
}

/** Opens the big screen of room `code` (a canonical code). */
export function openTv(code) {
  closeTv();
  screen.code = code;
  shell(code);
  resetTv(code);
  replace(document.getElementById("tv"), h("div.loading", { role: "status" }, h("span.spinner", { "aria-hidden": "true" }), t("conn.connecting")));
  connect(code);
  screen.tick = setInterval(tvTick, 500);
}

export function closeTv() {
  screen.sock?.close();
  screen.sock = null;
  clearTimeout(screen.timer);
  clearInterval(screen.tick);
  clearTimeout(screen.night);
  screen.code = null;
  screen.status = null;
  screen.decided = 0;
}

/** The night's matches won, read again until it holds `atLeast` decided matches (or tries run out). */
async function night(code, token, atLeast = 0, tries = NIGHT_TRIES) {
  clearTimeout(screen.night);
  let decided = -1;
  try {
    decided = tvNight(await Api.history(code, token));
  } catch {
    // the record is extra: the table goes on without it
  }
  if (screen.code !== code) return;
  if (decided >= 0) screen.decided = decided;
  if (decided < atLeast && tries > 1) screen.night = setTimeout(() => night(code, token, atLeast, tries - 1), NIGHT_RETRY_MS);
}

async function connect(code) {
  let cred = stored()[code];
  if (!cred?.token) {
    try {
      cred = await watch(code, cred?.revoked);
    } catch (err) {
      if (screen.code !== code) return;
      const gone = err.status === 404;
      status(gone ? "tv.gone" : err.code === "room_locked" ? "tv.locked" : err.code === "barred" ? "tv.barred" : "tv.retry", { code });
      screen.timer = setTimeout(() => connect(code), RETRY_MS);
      return;
    }
    if (screen.code !== code) return;
    keep(code, cred);
  }
  tvToken(cred.token);
  const sock = new RoomSocket(code, cred.token, {
    onState: (view, info) => {
      status(null);
      tvEvents(info.welcome && info.log ? info.log : [], info.events || [], view);
      renderTv(view, info);
      tvStory(code, cred.token, view);
      tvMoments(code, cred.token, view);
      const now = view.room.status;
      if (info.welcome) night(code, cred.token);
      else if (now === "match_over" && screen.status !== now) night(code, cred.token, screen.decided + 1);
      screen.status = now;
    },
    onStatus: (s) => {
      document.body.dataset.conn = s;
      if (s === "reconnecting") status("conn.reconnecting");
      else if (s === "open") status(null);
    },
    onFatal: (reason) => {
      sock.close();
      if (screen.sock !== sock) return;
      screen.sock = null;
      if (reason === "replaced") {
        // another tab opened this screen: it shows the room; this one steps back
        status("tv.elsewhere");
        return;
      }
      // a room that is gone: watch anew from nothing; a revoked token (removed): watch anew
      // naming it, so that the host's removal holds
      keep(code, reason === "gone" ? null : { revoked: cred.token });
      status(reason === "gone" ? "tv.gone" : "tv.retry", { code });
      screen.timer = setTimeout(() => connect(code), reason === "gone" ? RETRY_MS : 1000);
    },
  });
  screen.sock = sock;
  sock.connect();
}
