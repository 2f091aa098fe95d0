// A room's page around the lobby or the table: its top bar, the log beside it, the connection banner,
// opening the socket and leaving (or being sent away).
import { S, send } from "./core.js";
import { closeDialog } from "./dialogs.js";
import { h, replace } from "./dom.js";
import { resetHistory } from "./history.js";
import { t } from "./i18n.js";
import { renderLanding, setLanding } from "./landing.js";
import { copyInvite, resetLobby } from "./lobby.js";
import { clearLog, renderLog } from "./log.js";
import { Api, RoomSocket, Seats } from "./net.js";
import { register } from "./router.js";
import { howToButton } from "./help/howto.js";
import { app, brand, langSelect, settingsButton, shellParts, soundToggle } from "./shell.js";
import { resetTable, tick } from "./table.js";
import { onState, render } from "./view.js";

let tickTimer = null;

function roomShell() {
  document.body.dataset.screen = "room";
  const connEl = h("div#conn.conn", { role: "status", hidden: true });
  replace(app,
    h("a.skip", { href: "#hand" }, t("skip.link")),
    h("header.topbar.room-top",
      brand(true),
      h("button.room-chip", { type: "button", onclick: copyInvite, title: t("lobby.share"), "aria-label": `${t("room.label")} ${S.code.split("").join(" ")}. ${t("lobby.share")}` },
        h("span.room-label", t("room.label")), h("b.room-code", S.code)),
      h("div.top-actions", h("a.btn.ghost.small.tv-link", { href: `/tv/${S.code}`, target: "_blank", rel: "noopener",
        title: t("tv.showHint") }, t("tv.show")), howToButton(() => S.view?.room?.rules), langSelect(), soundToggle(), settingsButton(),
        h("button.btn.ghost.small", { type: "button", onclick: confirmLeave }, t("room.leave")))),
    connEl,
    h("main#main.room", { tabindex: "-1" },
      h("div#stage.stage"),
      h("aside.logbox", { "aria-labelledby": "log-h" },
        h("details#logdetails", { open: window.matchMedia("(min-width: 900px)").matches },
          h("summary#log-h", t("table.log")),
          h("ol#log.log", { role: "log", "aria-live": "polite", "aria-relevant": "additions" })))),
    ...shellParts());
  renderLog();
  renderConn();
}

export function openRoom(code, seat) {
  if (S.sock) S.sock.close();
  S.code = code;
  S.view = null;
  S.prev = null;
  S.you = seat.player_id;
  S.lastPlay = null;
  resetHistory();
  clearLog();
  Seats.touch(code);
  roomShell();
  replace(document.getElementById("stage"), h("div.loading", { role: "status" }, h("span.spinner", { "aria-hidden": "true" }), t("conn.connecting")));
  if (!S.catalog) {
    Api.rules().then((c) => {
      S.catalog = c;
      if (S.view) render({});
    }).catch(() => {});
  }
  S.sock = new RoomSocket(code, seat.token, {
    onState,
    onStatus: (status, info) => {
      S.conn = status;
      S.connInfo = info;
      renderConn();
    },
    onFatal: (reason) => {
      if (reason === "replaced") {
        showReplaced(code, seat);
        return;
      }
      Seats.drop(code);
      S.sock?.close();
      S.sock = null;
      setLanding({ invite: null, error: t(reason === "gone" ? "err.gone" : "err.removed", { code }), errorField: null });
      history.replaceState(null, "", "/");
      renderLanding();
    },
  });
  S.sock.connect();
  clearInterval(tickTimer);
  tickTimer = setInterval(() => {
    tick();
    renderConnCountdown();
  }, 250);
}

function showReplaced(code, seat) {
  S.conn = "closed";
  const stage = document.getElementById("stage");
  const conn = document.getElementById("conn");
  if (conn) conn.hidden = true;
  closeDialog(null);
  resetTable();
  resetLobby();
  replace(stage, h("section.panel.replaced", { role: "alert" },
    h("p", t("err.replaced")),
    h("button.btn.primary", { type: "button", onclick: () => openRoom(code, seat) }, t("err.useHere"))));
}

function confirmLeave() {
  const dlg = h("dialog.dlg.dlg-confirm", { "aria-labelledby": "leave-h" },
    h("div.dlg-body",
      h("h2#leave-h.dlg-title", t("room.leave")),
      h("p.dlg-desc", t("room.leave.confirm")),
      h("div.dlg-actions",
        h("button.btn.ghost", { type: "button", onclick: () => dlg.close() }, t("common.cancel")),
        h("button.btn.danger", { type: "button", onclick: async () => {
          dlg.close();
          await send("leave", {}, { quiet: true });
          Seats.drop(S.code);
          leaveToLanding();
        } }, t("room.leave.yes")))));
  dlg.addEventListener("close", () => dlg.remove());
  document.body.append(dlg);
  dlg.showModal();
}

export function leaveToLanding() {
  S.sock?.close();
  S.sock = null;
  S.view = null;
  clearInterval(tickTimer);
  setLanding({ invite: null, error: null });
  history.pushState(null, "", "/");
  renderLanding();
}

function renderConn() {
  const el = document.getElementById("conn");
  if (!el) return;
  const status = S.conn;
  document.body.dataset.conn = status;
  if (status === "open" || status === "closed") {
    el.hidden = true;
    return;
  }
  el.hidden = false;
  el.className = `conn conn-${status}`;
  const text = status === "connecting" ? t("conn.connecting") : t("conn.reconnecting");
  replace(el, h("span.spinner", { "aria-hidden": "true" }), h("span.conn-text", text), h("span.conn-count", { "aria-hidden": "true" }),
    status === "reconnecting" ? h("button.btn.small", { type: "button", onclick: () => S.sock?.retryNow() }, t("conn.retry")) : null);
}

function renderConnCountdown() {
  const el = document.querySelector("#conn .conn-count");
  if (!el || S.conn !== "reconnecting" || !S.connInfo?.at) return;
  const s = Math.max(0, Math.ceil((S.connInfo.at - Date.now()) / 1000));
  el.textContent = s > 0 ? t("conn.retryIn", { s }) : "";
}

export function rebuild() {
  if (S.sock && S.code) {
    closeDialog(null);
    document.querySelector(".dlg-replay")?.close();
    resetTable();
    resetLobby();
    roomShell();
    if (S.view) render({ welcome: true });
    else replace(document.getElementById("stage"), h("div.loading", { role: "status" }, t("conn.connecting")));
  } else renderLanding();
}

// what the shell and the landing page ask of a room (router.js)
register("room", openRoom);
register("leave", leaveToLanding);
register("rebuild", rebuild);
