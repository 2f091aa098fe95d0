// Mercyless browser client: routing, the landing page, the room shell and the socket's events.
import { cardFace } from "./cards.js";
import { S, announce, errorText, name, rememberNames, send } from "./core.js";
import { closeDialog } from "./dialogs.js";
import { h, replace } from "./dom.js";
import { describe } from "./events.js";
import { resetHistory, syncHistory } from "./history.js";
import { detectLang, LANG_NAMES, LANGS, lang, setLang, t } from "./i18n.js";
import { copyInvite, renderLobby, resetLobby } from "./lobby.js";
import { Api, ApiError, cleanName, normalizeCode, RoomSocket, Seats } from "./net.js";
import { setSound, sound, soundOn } from "./sound.js";
import { announceTurn, onTableKey, renderTable, resetTable, tick } from "./table.js";

const app = document.getElementById("app");
const NAME_KEY = "mercyless.name";
const LOG_MAX = 250;
const log = []; // {ev} or {text, cls}
let landingState = { invite: null, error: null, errorField: null, busy: false };
let tickTimer = null;

// -- shared chrome ------------------------------------------------------------------------------

// On a phone the closed picker shows the language's code ("NL": "Nederlands" was cut), its options
// the whole names: the select lies transparent over the code, as a rule's choice in the lobby does.
function langSelect() {
  const select = h("select.lang", { "aria-label": t("lang.label"), title: t("lang.label"),
    onchange: (e) => {
      setLang(e.target.value, true);
      rebuild();
    } },
  Object.keys(LANGS).map((l) => h("option", { value: l, selected: l === lang() }, LANG_NAMES[l])));
  return h("span.lang-pick", select, h("span.lang-face", { "aria-hidden": "true" }, lang().toUpperCase()));
}

function soundToggle() {
  const on = soundOn();
  return h("button.icon-btn.sound", { type: "button", "aria-pressed": String(on), "aria-label": t(on ? "sound.on" : "sound.off"),
    title: t(on ? "sound.on" : "sound.off"),
    onclick: (e) => {
      setSound(!soundOn());
      const b = e.currentTarget;
      b.setAttribute("aria-pressed", String(soundOn()));
      b.setAttribute("aria-label", t(soundOn() ? "sound.on" : "sound.off"));
      b.title = t(soundOn() ? "sound.on" : "sound.off");
      replace(b, soundIcon(soundOn()));
      if (soundOn()) sound("play");
    } }, soundIcon(on));
}

function soundIcon(on) {
  const span = document.createElement("span");
  span.setAttribute("aria-hidden", "true");
  span.className = "icon";
  span.innerHTML = `<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor"/>${on ? '<path d="M16 9a4 4 0 0 1 0 6"/><path d="M18.5 6.5a7.5 7.5 0 0 1 0 11"/>' : '<path d="M16 9l5 6M21 9l-5 6"/>'}</svg>`;
  return span;
}

function brand(small = false) {
  return h("a.brand", { href: "/", class: small ? "small" : "", "aria-label": t("app.name"),
    onclick: (e) => {
      if (S.sock) {
        e.preventDefault();
        leaveToLanding();
      }
    } },
  h("span.brand-cards", { "aria-hidden": "true" }, h("span.bc.bc1"), h("span.bc.bc2"), h("span.bc.bc3")),
  h("span.brand-name", t("app.name")));
}

function shellParts() {
  return [
    h("div#toasts.toasts", { "aria-live": "polite" }),
    h("div#sr-announce.sr-only", { "aria-live": "assertive", "aria-atomic": "true" }),
  ];
}

// -- landing ------------------------------------------------------------------------------------

function renderLanding() {
  closeDialog(null);
  resetTable();
  resetLobby();
  document.title = t("app.name");
  document.body.dataset.screen = "landing";
  const st = landingState;
  const savedName = localStorage.getItem(NAME_KEY) || "";
  const nameInput = h("input#name", { type: "text", autocomplete: "nickname", maxlength: 24, required: true, value: savedName,
    "aria-describedby": "name-hint", "aria-invalid": st.errorField === "name" ? "true" : null, enterkeyhint: "go" });
  const codeInput = h("input#code.code-input", { type: "text", autocomplete: "off", autocapitalize: "characters", spellcheck: false,
    maxlength: 8, value: st.invite || "", "aria-describedby": "code-hint", "aria-invalid": st.errorField === "code" ? "true" : null,
    enterkeyhint: "go", pattern: "[A-Za-z2-9 ]*",
    oninput: (e) => {
      const el = e.target;
      const pos = el.selectionStart;
      el.value = el.value.toUpperCase();
      el.setSelectionRange(pos, pos);
    },
    onkeydown: (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        doJoin();
      }
    } });
  const errorBox = h("p#land-error.form-error", { role: "alert" }, st.error || "");
  const busy = st.busy;

  const readName = () => {
    const n = cleanName(nameInput.value);
    if (!n) {
      landingState = { ...landingState, error: t("err.name"), errorField: "name" };
      renderLanding();
      document.getElementById("name")?.focus();
      return null;
    }
    localStorage.setItem(NAME_KEY, n);
    return n;
  };

  async function doCreate() {
    const n = readName();
    if (!n) return;
    await enterWith(() => Api.create(n), null);
  }

  async function doJoin() {
    const raw = (codeInput.value || "").replace(/\s+/g, "");
    const code = normalizeCode(raw);
    if (!code) {
      landingState = { ...landingState, error: t("err.code.format"), errorField: "code", invite: raw.toUpperCase() || null };
      renderLanding();
      document.getElementById("code")?.focus();
      return;
    }
    const n = readName();
    if (!n) return;
    const seat = Seats.get(code);
    if (seat) {
      openRoom(code, seat);
      return;
    }
    await enterWith(() => Api.join(code, n), code);
  }

  const invite = st.invite && normalizeCode(st.invite) ? normalizeCode(st.invite) : null;
  const joinPanel = invite && st.fromLink
    ? h("div.join-invite",
      h("p.invite-note", t("land.invited", { code: invite })),
      h("button.btn.primary.big.wide", { type: "button", disabled: busy, onclick: doJoin, "data-key": "join" }, t("land.joinCode", { code: invite })),
      h("button.linkish", { type: "button", onclick: () => {
        landingState = { invite: null, error: null, fromLink: false };
        history.replaceState(null, "", "/");
        renderLanding();
        document.getElementById("code")?.focus();
      } }, t("land.otherRoom")),
      h("input", { type: "hidden", id: "code", value: invite }))
    : null;
  if (joinPanel) codeInput.value = invite;

  const form = h("form.land-form", { novalidate: true, onsubmit: (e) => {
    e.preventDefault();
    if (joinPanel) doJoin();
    else doCreate();
  } },
  h("div.field",
    h("label", { for: "name" }, t("land.name")),
    nameInput,
    h("p#name-hint.hint", t("land.name.hint"))),
  joinPanel || [
    h("div.create",
      h("button.btn.primary.big.wide", { type: "submit", disabled: busy, "data-key": "create" }, t("land.create")),
      h("p.hint", t("land.create.hint"))),
    h("div.or", { "aria-hidden": "true" }, h("span", t("land.or"))),
    h("div.field.join-field",
      h("label", { for: "code" }, t("land.join")),
      h("div.join-row", codeInput,
        h("button.btn.big", { type: "button", disabled: busy, onclick: doJoin, "data-key": "join" }, t("land.join.btn"))),
      h("p#code-hint.hint", t("land.code.hint"))),
  ],
  errorBox,
  busy ? h("p.hint", { role: "status" }, t("land.busy")) : null);

  const rooms = Object.entries(Seats.all()).sort((a, b) => b[1].at - a[1].at).slice(0, 5);
  const roomList = rooms.length ? h("section.your-rooms", { "aria-labelledby": "yr-h" },
    h("h2#yr-h", t("land.yourRooms")),
    h("ul", rooms.map(([code, seat]) => h("li",
      h("a.btn.ghost", { href: `/r/${code}`, onclick: (e) => {
        e.preventDefault();
        history.pushState(null, "", `/r/${code}`);
        openRoom(code, seat);
      } }, t("land.rejoin", { code }), seat.name ? h("small", ` · ${seat.name}`) : null),
      h("button.icon-btn", { type: "button", "aria-label": t("land.forget", { code }), title: t("land.forget", { code }),
        onclick: () => {
          Seats.drop(code);
          renderLanding();
        } }, "×"))))) : null;

  replace(app,
    h("header.topbar", brand(), h("div.top-actions", langSelect(), soundToggle())),
    h("main#main.landing", { tabindex: "-1" },
      h("section.hero",
        h("div.hero-cards", { "aria-hidden": "true" },
          cardFace("r-7", { size: "md", class: "hc1" }), cardFace("w-draw10", { size: "md", class: "hc2" }),
          cardFace("b-skip", { size: "md", class: "hc3" }), cardFace("y-2", { size: "md", class: "hc4" })),
        h("h1", t("app.name")),
        h("p.tagline", t("app.tagline"))),
      h("section.panel.land-panel", form),
      roomList),
    ...shellParts());
  if (st.errorField === "code") codeInput.focus();
  else if (!savedName || st.errorField === "name") nameInput.focus();
}

async function enterWith(call, code) {
  landingState = { ...landingState, busy: true, error: null, errorField: null };
  renderLanding();
  try {
    const res = await call();
    const seat = { token: res.token, player_id: res.player_id, name: localStorage.getItem(NAME_KEY) || "", spectator: !!res.spectator };
    Seats.put(res.code, seat);
    landingState = { invite: null, error: null, busy: false };
    history.pushState(null, "", `/r/${res.code}`);
    openRoom(res.code, seat);
  } catch (err) {
    let msg = t("err.network");
    let field = null;
    if (err instanceof ApiError) {
      if (err.code === "room_not_found") {
        msg = t("err.code.notfound", { code });
        field = "code";
      } else if (err.code === "room_full") {
        msg = t("err.code.full", { code });
        field = "code";
      } else if (err.code === "bad_name") {
        msg = t("err.name");
        field = "name";
      } else if (err.status !== 0) msg = errorText({ code: err.code, message: err.message });
    }
    // a code that found no room stays in the box: a one-letter typo is fixed, not retyped
    landingState = { ...landingState, busy: false, error: msg, errorField: field,
      ...(field === "code" ? { fromLink: false, invite: code } : {}) };
    renderLanding();
  }
}

// -- the room -------------------------------------------------------------------------------------

function roomShell() {
  document.body.dataset.screen = "room";
  const connEl = h("div#conn.conn", { role: "status", hidden: true });
  replace(app,
    h("a.skip", { href: "#hand" }, t("skip.link")),
    h("header.topbar.room-top",
      brand(true),
      h("button.room-chip", { type: "button", onclick: copyInvite, title: t("lobby.share"), "aria-label": `${t("room.label")} ${S.code.split("").join(" ")}. ${t("lobby.share")}` },
        h("span.room-label", t("room.label")), h("b.room-code", S.code)),
      h("div.top-actions", langSelect(), soundToggle(),
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

function openRoom(code, seat) {
  if (S.sock) S.sock.close();
  S.code = code;
  S.view = null;
  S.prev = null;
  S.you = seat.player_id;
  S.lastPlay = null;
  resetHistory();
  log.length = 0;
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
      landingState = { invite: null, error: t(reason === "gone" ? "err.gone" : "err.removed", { code }), errorField: null };
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

function leaveToLanding() {
  S.sock?.close();
  S.sock = null;
  S.view = null;
  clearInterval(tickTimer);
  landingState = { invite: null, error: null };
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

// -- log ----------------------------------------------------------------------------------------

function logLine(entry) {
  const d = entry.ev ? describe(entry.ev, name, S.you) : entry;
  if (!d) return null;
  const li = h("li", { class: d.cls || "" });
  const cards = d.cards || [];
  const chips = cards.length ? h("span.log-cards", { "aria-hidden": "true", class: cards.length > 2 ? "below" : "" },
    cards.slice(0, 24).map((c) => cardFace(c, { size: "xs" }))) : null;
  if (chips && cards.length <= 2) li.append(chips);
  li.append(h("span.log-text", d.text, entry.repeat > 1 ? h("span.log-repeat", ` ×${entry.repeat}`) : null));
  if (chips && cards.length > 2) li.append(chips);
  entry.text = d.text;
  return li;
}

function pushLog(entry) {
  const ol = document.getElementById("log");
  const last = log[log.length - 1];
  const d = entry.ev ? describe(entry.ev, name, S.you) : entry;
  if (!d) return;
  entry.text = d.text;
  const ticker = document.getElementById("ticker");
  if (ticker) ticker.textContent = d.text;
  // the same line again (the host adjusting rules, say) becomes "×N" instead of a new line
  if (last && last.text === d.text && !(d.cards || []).length && ol && ol.lastElementChild) {
    last.repeat = (last.repeat || 1) + 1;
    const li = logLine(last);
    ol.lastElementChild.replaceWith(li);
    return;
  }
  log.push(entry);
  if (log.length > LOG_MAX) log.splice(0, log.length - LOG_MAX);
  if (!ol) return;
  const li = logLine(entry);
  if (!li) return;
  ol.append(li);
  while (ol.children.length > LOG_MAX) ol.firstChild.remove();
  ol.scrollTop = ol.scrollHeight;
}

function renderLog() {
  const ol = document.getElementById("log");
  if (!ol) return;
  replace(ol, log.map(logLine).filter(Boolean));
  ol.scrollTop = ol.scrollHeight;
}

// -- state updates --------------------------------------------------------------------------------

function computeFx(prev, view, events, welcome) {
  const fx = { welcome, bump: new Set(), ko: new Set() };
  if (welcome || !prev) return fx;
  for (const ev of events) {
    switch (ev.kind) {
      case "played":
        fx.played = ev;
        break;
      case "eliminated":
        fx.ko.add(ev.player);
        break;
      case "swapped":
      case "passed_hands":
        fx.swirl = true;
        break;
      case "reversed":
        fx.reversed = true;
        break;
      case "roulette":
        fx.roulette = ev;
        break;
      case "reshuffled":
        fx.drawPile = true;
        break;
      case "reaction":
        (fx.reactions ||= []).push(ev);
        break;
      default:
        break;
    }
  }
  const before = new Map((prev.players || []).map((p) => [p.id, p.cards]));
  for (const p of view.players || []) if (before.has(p.id) && before.get(p.id) !== p.cards) fx.bump.add(p.id);
  const ps = prev.game?.stack;
  const ns = view.game?.stack;
  if (ns && (!ps || ps.total !== ns.total)) fx.stack = true;
  return fx;
}

function soundsFor(events, prev, view) {
  for (const ev of events) {
    if (ev.kind === "played") sound(/draw|reverse4/.test(ev.card) ? "stack" : "play");
    else if ((ev.kind === "drew" || ev.kind === "took_stack") && ev.player === S.you) sound("draw");
    else if (ev.kind === "uno" || ev.kind === "exposed") sound("uno");
    if (ev.kind === "exposed" && ev.player === S.you) announce(t("table.exposedYou", { s: view.room.rules.catch_window_s }));
    else if (ev.kind === "eliminated") sound("eliminated");
    else if (ev.kind === "round_over") sound(ev.winner === S.you ? "win" : "play");
  }
  const was = prev?.game && !prev.game.winner && (prev.game.pending ? prev.game.pending.player : prev.game.turn) === S.you;
  const now = view.game && !view.game.winner && (view.game.pending ? view.game.pending.player : view.game.turn) === S.you;
  if (now && !was) {
    sound("turn");
    announceTurn();
  }
}

function onState(view, info) {
  const prev = S.view;
  S.prev = prev;
  S.view = view;
  S.you = S.sock.you;
  S.version = info.version;
  if (typeof info.now === "number") S.skew = info.now - Date.now();
  rememberNames(view);
  for (const ev of info.events) {
    if (ev.kind === "played") S.lastPlay = ev;
    if (ev.kind === "joined" && ev.name) S.names.set(ev.player, ev.name);
    if (ev.kind === "bot_added") {
      if (ev.name) S.names.set(ev.player, ev.name);
      if (ev.level) S.levels.set(ev.player, ev.level);
    }
    pushLog({ ev });
  }
  if (info.welcome && !prev) pushLog({ text: t("ev.connected", { code: S.code }), cls: "meta" });
  if (!info.welcome || prev) soundsFor(info.events, prev, view);
  else if (view.game && !view.game.winner && view.game.turn === S.you) announceTurn();
  Seats.touch(S.code);
  if (info.welcome && view.players.some((p) => p.bot && !p.level && !S.levels.has(p.id))) fetchLevels();
  const fx = computeFx(prev, view, info.events, info.welcome);
  render(fx);
}

function fetchLevels() {
  Api.room(S.code).then((summary) => {
    for (const seat of summary.seats || []) if (seat.level) S.levels.set(seat.id, seat.level);
    render({});
  }).catch(() => {});
}

function render(fx = {}) {
  const stage = document.getElementById("stage");
  if (!stage || !S.view) return;
  const active = document.activeElement;
  const focusKey = active && active !== document.body ? active.dataset?.key || (active.id ? `#${active.id}` : null) : null;
  const handIndex = [...document.querySelectorAll(".hand .hand-card")].indexOf(active);
  const status = S.view.room.status;
  document.body.dataset.status = status;
  document.body.dataset.version = String(S.version);
  document.title = `${S.code} · ${t("app.name")}`;
  if (status === "lobby") {
    resetTable();
    renderLobby(stage);
  } else {
    resetLobby();
    renderTable(stage, fx);
    // a table built after this patch's events were logged starts with the latest line
    const ticker = document.getElementById("ticker");
    if (ticker && !ticker.textContent && log.length) ticker.textContent = log[log.length - 1].text || "";
  }
  syncHistory();
  if (focusKey && !document.body.contains(active)) {
    const again = focusKey.startsWith("#") ? document.getElementById(focusKey.slice(1)) : stage.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)
      || app.querySelector(`[data-key="${CSS.escape(focusKey)}"]`);
    if (again && !again.hidden) again.focus({ preventScroll: true });
    else if (handIndex >= 0) {
      // the focused card was played: keep the keyboard in the hand, on its neighbour
      const cards = document.querySelectorAll(".hand .hand-card");
      const next = cards[Math.min(handIndex, cards.length - 1)] || document.querySelector(".pile-draw");
      next?.focus({ preventScroll: true });
    }
  }
}

S.rerender = () => render({});

function rebuild() {
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

// -- keys and routing -------------------------------------------------------------------------------

document.addEventListener("keydown", (e) => {
  if (document.body.dataset.screen !== "room") return;
  if (document.querySelector("dialog[open]")) return;
  const tag = (e.target.tagName || "").toLowerCase();
  if (["input", "select", "textarea"].includes(tag)) return;
  onTableKey(e);
});

function route() {
  const m = /^\/r\/([^/]+)\/?$/.exec(location.pathname);
  if (m) {
    const raw = decodeURIComponent(m[1]);
    const code = normalizeCode(raw);
    const seat = code ? Seats.get(code) : null;
    if (seat) {
      openRoom(code, seat);
      return;
    }
    S.sock?.close();
    S.sock = null;
    landingState = code
      ? { invite: code, fromLink: true, error: null }
      : { invite: raw.toUpperCase().slice(0, 8), fromLink: false, error: t("err.code.format"), errorField: "code" };
    renderLanding();
    return;
  }
  S.sock?.close();
  S.sock = null;
  landingState = { invite: null, error: landingState.error };
  renderLanding();
}

window.addEventListener("popstate", route);
setLang(detectLang());
route();
