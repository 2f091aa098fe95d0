// The landing page: the player's name, create a room or join one by code or invite link, and the
// rooms this browser has a seat in.
import { cardFace } from "./cards.js";
import { errorText } from "./core.js";
import { closeDialog } from "./dialogs.js";
import { h, replace } from "./dom.js";
import { t } from "./i18n.js";
import { resetLobby } from "./lobby.js";
import { Api, ApiError, cleanName, normalizeCode, Seats } from "./net.js";
import { go } from "./router.js";
import { app, brand, langSelect, settingsButton, shellParts, soundToggle } from "./shell.js";
import { resetTable } from "./table.js";

const NAME_KEY = "mercyless.name";
export let landingState = { invite: null, error: null, errorField: null, busy: false };
// What the player typed, kept across the page's own redraws (an error, a request under way): a
// mistake in one field never wipes the other, nor brings back an older code. null: not typed.
const typed = { name: null, code: null };

/** The landing page renders from this: an invite, the error to show and where, a request under way.
 * A new state from outside (a link, leaving a room) starts the code box from its invite. */
export function setLanding(state) {
  landingState = state;
  typed.code = null;
}

/** A redraw of the landing page itself: the typed values stay. */
function update(state) {
  landingState = state;
}

export function renderLanding() {
  closeDialog(null);
  resetTable();
  resetLobby();
  document.title = t("app.name");
  document.body.dataset.screen = "landing";
  const st = landingState;
  const savedName = localStorage.getItem(NAME_KEY) || "";
  const nameInput = h("input#name", { type: "text", autocomplete: "nickname", maxlength: 24, required: true,
    value: typed.name ?? savedName,
    "aria-describedby": "name-hint", "aria-invalid": st.errorField === "name" ? "true" : null, enterkeyhint: "go",
    oninput: (e) => {
      typed.name = e.target.value;
    } });
  const codeInput = h("input#code.code-input", { type: "text", autocomplete: "off", autocapitalize: "characters", spellcheck: false,
    maxlength: 8, value: typed.code ?? st.invite ?? "", "aria-describedby": "code-hint", "aria-invalid": st.errorField === "code" ? "true" : null,
    enterkeyhint: "go", pattern: "[A-Za-z2-9 ]*",
    oninput: (e) => {
      const el = e.target;
      const pos = el.selectionStart;
      el.value = el.value.toUpperCase();
      el.setSelectionRange(pos, pos);
      typed.code = el.value;
    },
    onkeydown: (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        doJoin();
      }
    } });
  const busy = st.busy;
  // a full room's lobby: the newcomer may watch instead, and sits when a seat frees
  const watchOffer = st.watchOffer && st.errorField === "code" ? h("button.btn.ghost.small.watch-instead", { type: "button", disabled: busy, "data-key": "watch",
    onclick: () => {
      const n = readName();
      if (n) enterWith(() => Api.join(st.watchOffer, n, { watch: true }), st.watchOffer);
    } }, t("land.watchInstead", { code: st.watchOffer })) : null;
  const errorBox = h("p#land-error.form-error", { role: "alert" }, st.error || "", watchOffer ? [" ", watchOffer] : null);

  const readName = () => {
    const n = cleanName(nameInput.value);
    if (!n) {
      // something typed that is no name (only invisible or control characters): say so
      const why = nameInput.value.trim() ? t("err.name.invisible") : t("err.name");
      update({ ...landingState, error: why, errorField: "name" });
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
      update({ ...landingState, error: t("err.code.format"), errorField: "code" });
      renderLanding();
      document.getElementById("code")?.focus();
      return;
    }
    const n = readName();
    if (!n) return;
    const seat = Seats.get(code);
    if (seat) {
      go("room", code, seat);
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
        setLanding({ invite: null, error: null, fromLink: false });
        typed.code = "";
        history.replaceState(null, "", "/");
        renderLanding();
        document.getElementById("code")?.focus();
      } }, t("land.otherRoom")),
      h("input", { type: "hidden", id: "code", value: invite }))
    : null;
  if (joinPanel) codeInput.value = invite;

  // Enter in the name field (a phone's "Go") joins when a code is filled in, else creates
  const form = h("form.land-form", { novalidate: true, onsubmit: (e) => {
    e.preventDefault();
    if (busy) return;
    if (joinPanel || codeInput.value.trim()) doJoin();
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
        go("room", code, seat);
      } }, t("land.rejoin", { code }), seat.name ? h("small", ` · ${seat.name}`) : null),
      h("button.icon-btn", { type: "button", "aria-label": t("land.forget", { code }), title: t("land.forget", { code }),
        onclick: () => {
          Seats.drop(code);
          renderLanding();
        } }, "×"))))) : null;

  replace(app,
    h("header.topbar", brand(), h("div.top-actions", langSelect(), soundToggle(), settingsButton())),
    h("main#main.landing", { tabindex: "-1" },
      h("section.hero",
        h("div.hero-cards", { "aria-hidden": "true" },
          cardFace("r-7", { size: "md", class: "hc1" }), cardFace("w-draw10", { size: "md", class: "hc2" }),
          cardFace("b-skip", { size: "md", class: "hc3" }), cardFace("y-2", { size: "md", class: "hc4" })),
        h("h1", t("app.name")),
        h("p.tagline", t("app.tagline")), soundToggle({ labelled: true })),
      h("section.panel.land-panel", form),
      roomList),
    ...shellParts());
  if (st.errorField === "code") codeInput.focus();
  else if (!savedName || st.errorField === "name") nameInput.focus();
}

async function enterWith(call, code) {
  update({ ...landingState, busy: true, error: null, errorField: null, watchOffer: null });
  renderLanding();
  let watchOffer = null;
  try {
    const res = await call();
    const seat = { token: res.token, player_id: res.player_id, name: localStorage.getItem(NAME_KEY) || "", spectator: !!res.spectator };
    Seats.put(res.code, seat);
    setLanding({ invite: null, error: null, busy: false });
    typed.name = null;
    history.pushState(null, "", `/r/${res.code}`);
    go("room", res.code, seat);
  } catch (err) {
    let msg = t("err.network");
    let field = null;
    if (err instanceof ApiError) {
      if (err.code === "room_not_found") {
        msg = t("err.code.notfound", { code });
        field = "code";
      } else if (err.code === "room_full") {
        // mid-round a joiner would watch: then it is the spectators' places that ran out
        const playing = (await roomStatus(code)) === "playing";
        msg = t(playing ? "err.code.watchFull" : "err.code.full", { code });
        if (!playing) watchOffer = code;
        field = "code";
      } else if (err.code === "room_locked") {
        msg = t("err.code.locked", { code });
      } else if (err.code === "barred") {
        msg = t("err.code.barred", { code });
      } else if (err.code === "rate_limited") {
        msg = t("err.rateLimited");
      } else if (err.code === "server_full") {
        msg = t("err.serverFull");
      } else if (err.code === "bad_name") {
        msg = t("err.name.invisible");
        field = "name";
      } else if (err.code === "name_taken") {
        // what was typed stays in the box, to be changed a little rather than retyped
        msg = t("err.name.taken", { name: localStorage.getItem(NAME_KEY) || "" });
        field = "name";
      } else if (err.status !== 0) msg = errorText({ code: err.code, message: err.message });
    }
    // a code that found no room stays in the box: a one-letter typo is fixed, not retyped
    update({ ...landingState, busy: false, error: msg, errorField: field, watchOffer,
      ...(field === "code" ? { fromLink: false, invite: code } : {}) });
    if (field === "code") typed.code ??= code;
    renderLanding();
  }
}

/** The room's status ("lobby", "playing", …), or null when it cannot be read. */
async function roomStatus(code) {
  try {
    return (await Api.room(code)).status || null;
  } catch {
    return null;
  }
}
