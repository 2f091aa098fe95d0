// The lobby: the code large enough to read across a table, the invite link and the room's lock,
// seats (with the running scores between the rounds of a match), spectators, bots, rules.
import { S, isHost, name, send, toast } from "./core.js";
import { h, replace, svg } from "./dom.js";
import { KIND_ORDER, parse } from "./cards.js";
import { historyPanel } from "./history.js";
import { dealPanel } from "./deals.js";
import { t } from "./i18n.js";
import { askInviteBase, copyInvite, inviteQr, inviteUrl, knownBase } from "./invite.js";
import { chatMenu } from "./chat.js";
import { LEVELS, botBadge, botLevelPicker, muteButton, mutedTag, removeButton, spectatorList } from "./members.js";
import { phonesNote } from "./pwa.js";

const ENUM_ORDER = ["draw", "stacking", "first_card", "reverse4_two_players", "discard_all_top", "seven",
  "zero", "roulette_chooser"];
const INT_ORDER = ["mercy_limit", "hand_size", "uno_penalty", "catch_window_s", "target_score", "turn_timer_s"];

const MAX_SEATS = 10;
let refs = null; // persistent elements of the current lobby

export { copyInvite }; // the top bar's room code copies the invite too (room.js)

/** A seat's badge: its name's first letter on its colour, `players[].hue` (every bot of a room
 * its own, away from the others'; a person's from their id, as computed here without one), a
 * bot's a rounded square. */
function avatar(p) {
  let hue = p.hue;
  if (typeof hue !== "number") {
    let hash = 0;
    for (const ch of String(p.id)) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
    hue = hash % 360;
  }
  return h("span.avatar", { class: p.bot ? "is-bot" : "", style: { "--hue": String(hue) }, "aria-hidden": "true" },
    ([...String(p.name || "?")][0] || "?").toUpperCase());
}

export { avatar };

function seatItem(p, i, host, scores) {
  const you = p.id === S.you;
  const li = h("li.seat", { class: you ? "is-you" : "", "data-player": p.id });
  li.append(h("span.seat-no", { "aria-hidden": "true" }, String(i + 1)));
  li.append(avatar(p));
  li.append(h("span.seat-name", p.name));
  // beside the name, not in it: a long name's ellipsis would cut "(you)" off
  if (you) li.append(h("span.tag.tag-you", ` (${t("lobby.you")})`));
  const badges = h("span.badges");
  if (p.id === S.view.room.host) badges.append(h("span.badge.badge-host", t("lobby.host")));
  // the host sets a bot's level here; a seat a bot only stands in for (its player away) is no bot to set
  if (p.bot) badges.append(host && p.id.startsWith("b") ? botLevelPicker(p) : botBadge(p));
  if (scores) badges.append(h("span.badge.badge-score", t("table.score", { n: p.score })));
  const muted = mutedTag(p);
  if (muted) badges.append(muted);
  li.append(badges);
  li.append(h("span.dot", { class: p.connected ? "on" : "off", role: "img", "aria-label": t(p.connected ? "online" : "offline"),
    title: t(p.connected ? "online" : "offline") }));
  if (host && p.id !== S.view.room.host && !p.bot) li.append(muteButton(p));
  if (host && p.id !== S.view.room.host) li.append(removeButton(p));
  return li;
}

function presetMatch(rules) {
  const presets = S.catalog?.presets || {};
  for (const [key, preset] of Object.entries(presets)) {
    if (JSON.stringify(preset) === JSON.stringify(rules)) return key;
    const same = Object.keys(preset).every((k) => JSON.stringify(preset[k]) === JSON.stringify(rules[k]));
    if (same) return key;
  }
  return null;
}

function ruleField(key, spec, host) {
  const id = `rule-${key}`;
  const wrap = h("div.rule", { "data-rule": key });
  wrap.append(h("label.rule-name", { for: id }, t(`rule.${key}`)));
  let control;
  let face = null; // a select's chosen text, shown whole (see showChoice)
  if (key === "scoring") {
    control = h("input.switch", { type: "checkbox", id, role: "switch", disabled: !host, "aria-describedby": `${id}-d`,
      onchange: (e) => send("set_rules", { rules: { scoring: e.target.checked } }) });
  } else if (spec.values) {
    control = h("select", { id, disabled: !host, "aria-describedby": `${id}-d`,
      onchange: (e) => {
        showChoice(e.target, face);
        send("set_rules", { rules: { [key]: e.target.value } });
      } },
    spec.values.map((v) => h("option", { value: v }, t(`rule.${key}.${v}`))));
    face = h("span.choice-face", { "aria-hidden": "true" });
  } else {
    const min = key === "turn_timer_s" ? 0 : spec.min;
    control = h("input.num", { id, type: "number", inputmode: "numeric", min, max: spec.max, step: 1, disabled: !host,
      "aria-describedby": `${id}-d`,
      onchange: (e) => {
        const el = e.target;
        const n = Number(el.value);
        const okTimer = key !== "turn_timer_s" || n === 0 || n >= spec.min;
        if (!Number.isInteger(n) || n < min || n > spec.max || !okTimer) {
          el.setAttribute("aria-invalid", "true");
          const range = key === "turn_timer_s" ? `0, ${spec.min}–${spec.max}` : `${spec.min}–${spec.max}`;
          toast(`${t(`rule.${key}`)}: ${range}`, "error");
          el.value = S.view.room.rules[key];
          return;
        }
        el.removeAttribute("aria-invalid");
        send("set_rules", { rules: { [key]: n } });
      } });
  }
  const unit = key.endsWith("_s") ? t("unit.s") : key === "target_score" ? t("unit.pts") : ["mercy_limit", "hand_size", "uno_penalty"].includes(key) ? t("unit.cards") : "";
  const row = h("div.rule-control", face ? h("div.choice", control, face) : control,
    unit ? h("span.unit", { "aria-hidden": "true" }, unit) : null);
  wrap.append(row);
  wrap.append(h("p.rule-desc", { id: `${id}-d` }, t(`rule.${key}.d`)));
  return { wrap, control, key, face };
}

// A closed <select> draws its choice on one line and cuts what does not fit, and some choices are
// a sentence ("Only without a match: draw until playable, play it"; longer still in Dutch). So
// the select lies transparent over an element that shows the chosen text and wraps it: a click,
// a tap or the keyboard still work the native select (and its picker on a phone), a screen
// reader still reads the select (the copy is aria-hidden).
function showChoice(select, face) {
  if (face) face.textContent = select.selectedOptions[0]?.text || "";
}

/** The kinds of the deck's codes as the server lists them (``GET /api/rules``), coloured and
 * wild apart, in the hand's order: a card the engine gains shows up here by itself. */
function deckKinds(codes) {
  const colored = new Set();
  const wild = new Set();
  for (const code of codes) {
    const p = parse(code);
    (p.wild ? wild : colored).add(p.kind);
  }
  const rank = (k) => (KIND_ORDER.includes(k) ? KIND_ORDER.indexOf(k) : KIND_ORDER.length);
  const ordered = (set) => [...set].sort((a, b) => rank(a) - rank(b));
  return { colored: ordered(colored), wild: ordered(wild) };
}

function deckEditor(host, codes) {
  const details = h("details.deck");
  const summary = h("summary");
  details.append(summary);
  const grid = h("div.deck-grid");
  const inputs = [];
  const sendDeck = () => {
    const deck = {};
    for (const inp of inputs) {
      const n = Math.max(0, Math.min(100, Math.floor(Number(inp.value) || 0)));
      for (const code of inp.codes) if (n > 0) deck[code] = n;
    }
    send("set_rules", { rules: { deck } });
  };
  const add = (kind, codes, label) => {
    const id = `deck-${kind}`;
    const inp = h("input.num.deck-num", { id, type: "number", min: 0, max: 100, step: 1, disabled: !host, onchange: sendDeck });
    inp.codes = codes;
    inp.kind = kind;
    inputs.push(inp);
    grid.append(h("label.deck-item", { for: id }, h("span", label), inp));
  };
  const kinds = deckKinds(codes);
  for (const k of kinds.colored) add(k, ["r", "y", "g", "b"].map((c) => `${c}-${k}`), /^\d$/.test(k) ? k : t(`kind.${k}`));
  for (const k of kinds.wild) add(k, [`w-${k}`], t(`kind.${k}`));
  details.append(h("p.rule-desc", t("rule.deck.d")), grid);
  return { details, summary, inputs };
}

function build(stage) {
  const host = isHost();
  const codeEl = h("p.bigcode", { "aria-label": "" });
  const linkEl = h("code.invite-link");
  // a phone reads the link from the screen: a QR code of it (the server draws it)
  const qr = inviteQr(host);
  const lockBox = h("div.roomlock");
  const invite = h("section.panel.invite", { "aria-labelledby": "invite-h" },
    h("h2#invite-h.label", t("lobby.code")),
    codeEl,
    h("div.invite-actions",
      h("button.btn.primary", { type: "button", "data-key": "copy", onclick: copyInvite }, t("lobby.share")),
      navigator.share ? h("button.btn", { type: "button", onclick: () => navigator.share({ title: "Mercyless", url: inviteUrl() }).catch(() => {}) }, t("lobby.shareNative")) : null),
    linkEl, qr.qr, qr.warn, phonesNote(), lockBox);

  const seatsH = h("h2#seats-h");
  const matchNote = h("p.note.match-note", { hidden: true });
  const seatList = h("ol.seatlist");
  const spect = h("div.spectators-box");
  const level = h("select#bot-level", { "aria-label": t("lobby.botLevel") },
    LEVELS.map((l) => h("option", { value: l }, t(`level.${l}`))));
  level.value = localStorage.getItem("mercyless.botLevel") || "normal";
  level.addEventListener("change", () => localStorage.setItem("mercyless.botLevel", level.value));
  const addBot = h("div.addbot", h("label.sr-only", { for: "bot-level" }, t("lobby.botLevel")), level,
    h("button.btn", { type: "button", "data-key": "addbot", onclick: () => send("add_bot", { level: level.value }) }, `+ ${t("lobby.addBot")}`));
  const startBtn = h("button.btn.primary.big.start", { type: "button", "data-key": "start", onclick: () => send("start") }, t("lobby.start"));
  const startNote = h("p.note", { role: "status" });
  const seats = h("section.panel.seats", { "aria-labelledby": "seats-h" }, seatsH, matchNote, seatList, h("div.chat-row", chatMenu()), host ? addBot : null, spect,
    h("div.startbar", host ? startBtn : null, startNote));

  const presetBox = h("div.presets", { role: "group", "aria-label": t("lobby.preset") });
  const presetBtns = {};
  for (const key of Object.keys(S.catalog?.presets || { mercyless: 1, printed: 1 })) {
    const b = h("button.preset", { type: "button", disabled: !host, "aria-pressed": "false", "data-key": `preset:${key}`,
      onclick: () => send("set_rules", { rules: { preset: key } }) },
    h("b", t(`preset.${key}`)), h("small", t(`preset.${key}.d`)));
    presetBtns[key] = b;
    presetBox.append(b);
  }
  const fields = [];
  const grid = h("div.rulegrid");
  const options = S.catalog?.options || {};
  for (const key of [...ENUM_ORDER, "scoring", ...INT_ORDER]) {
    if (!options[key]) continue;
    const f = ruleField(key, options[key], host);
    fields.push(f);
    grid.append(f.wrap);
  }
  const deck = deckEditor(host, options.deck?.codes || []);
  const rules = h("section.panel.rules", { "aria-labelledby": "rules-h" },
    h("h2#rules-h", t("lobby.rules")),
    host ? null : h("p.note", t("lobby.rulesHostOnly")),
    presetBox, grid, options.deck ? deck.details : null);

  const root = h("div.lobby", h("div.lobby-side", invite, seats, dealPanel(), historyPanel()), rules);
  replace(stage, root);
  refs = { stage, root, host, codeEl, linkEl, qr, lockBox, seatsH, matchNote, seatList, spect, startBtn, startNote, presetBtns, fields,
    deck };
}

// Which panel the lobby was reached from, per room and round: from round_over the match goes on
// (start deals its next round), from match_over start begins a new match.
const cameFrom = new Map();

/** null in a new room's lobby, else "round_over" or "match_over": what the last round ended in. */
function afterRound(view) {
  const room = view.room;
  if (!room.round) return null;
  const key = `${room.code}:${room.round}`;
  const prev = S.prev?.room;
  if (prev && prev.code === room.code && prev.round === room.round && ["round_over", "match_over"].includes(prev.status)) {
    cameFrom.set(key, prev.status);
  }
  if (cameFrom.has(key)) return cameFrom.get(key);
  // opened in the lobby (a reload): the view does not say, but a won match has a score at its target
  const rules = room.rules;
  return rules.scoring && view.players.some((p) => p.score >= rules.target_score) ? "match_over" : "round_over";
}

const LOCK_ICON = '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round">'
  + '<rect x="5" y="11" width="14" height="10" rx="2"/><path d="M8 11V8a4 4 0 0 1 8 0v3"/></svg>';

/** The room's lock: a switch for the host (and the way back in for removed players), a note for others. */
function renderLock(box, room, host) {
  const locked = !!room.locked;
  const state = t(locked ? "lobby.locked" : "lobby.open");
  box.classList.toggle("is-locked", locked);
  if (!host) {
    replace(box, locked ? h("p.note.lock-note", svg(LOCK_ICON), state) : null);
    return;
  }
  const resetOnError = (answer) => {
    if (answer.type === "error") S.rerender?.();
  };
  replace(box,
    h("label.lock-row", { for: "room-lock" },
      h("input#room-lock.switch", { type: "checkbox", role: "switch", checked: locked, "aria-label": t("lobby.lock"),
        "aria-describedby": "lock-state", onchange: (e) => send("set_room", { locked: e.target.checked }).then(resetOnError) }),
      h("span.lock-text", h("b", t("lobby.lock")), h("small#lock-state", locked ? svg(LOCK_ICON) : null, state))),
    room.removed > 0 ? h("button.btn.small.readmit", { type: "button", "data-key": "readmit",
      onclick: () => send("set_room", { readmit: true }) }, t("lobby.readmit", { n: room.removed })) : null);
}

export function renderLobby(stage) {
  const host = isHost();
  if (!refs || refs.stage !== stage || !stage.contains(refs.root) || refs.host !== host || refs.lang !== document.documentElement.lang
      || (S.catalog && !refs.fields.length)) {
    build(stage);
    refs.lang = document.documentElement.lang;
  }
  const view = S.view;
  const room = view.room;
  const code = room.code;
  refs.codeEl.replaceChildren(h("span", code.slice(0, 3)), h("span", code.slice(3)));
  refs.codeEl.setAttribute("aria-label", code.split("").join(" "));
  showInvite();
  renderLock(refs.lockBox, room, host);
  refs.seatsH.textContent = t("lobby.seats", { n: view.players.length });
  // back from a round: the scores so far, and what starting does next
  const after = afterRound(view);
  const scores = !!after && !!room.rules.scoring;
  refs.matchNote.hidden = !scores;
  refs.matchNote.textContent = !scores ? "" : after === "match_over" ? t("lobby.afterMatch") : t("lobby.afterRound", { n: room.round });
  replace(refs.seatList, view.players.map((p, i) => seatItem(p, i, host, scores)));
  replace(refs.spect, spectatorList(room));
  const enough = view.players.length >= 2;
  // ten seats is the most a room has: no bot to add then
  const full = view.players.length >= MAX_SEATS;
  const addBtn = refs.root.querySelector("button[data-key=addbot]");
  if (addBtn) {
    addBtn.disabled = full;
    addBtn.title = full ? t("lobby.full") : "";
  }
  if (refs.startBtn) {
    refs.startBtn.disabled = !enough;
    refs.startBtn.textContent = after === "round_over" ? t("lobby.startNext", { n: room.round + 1 })
      : after === "match_over" ? t("lobby.startNewMatch") : t("lobby.start");
  }
  refs.startNote.textContent = !enough ? t("lobby.needTwo") : host ? ""
    : t(after === "round_over" ? "lobby.waitHostNext" : "lobby.waitHost", { name: name(room.host) });

  const rules = room.rules;
  const match = presetMatch(rules);
  for (const [key, b] of Object.entries(refs.presetBtns)) b.setAttribute("aria-pressed", String(key === match));
  for (const f of refs.fields) {
    if (document.activeElement === f.control && f.control.tagName === "INPUT" && f.control.type === "number") continue;
    if (f.key === "scoring") f.control.checked = !!rules.scoring;
    else f.control.value = String(rules[f.key]);
    showChoice(f.control, f.face);
    f.control.removeAttribute("aria-invalid");
  }
  const deck = rules.deck || {};
  let total = 0;
  for (const n of Object.values(deck)) total += n;
  replace(refs.deck.summary, h("span", `${t("rule.deck")}: ${t("rule.deck.total", { n: total })}`), host ? h("span.deck-edit", t("rule.deck.edit")) : null);
  for (const inp of refs.deck.inputs) {
    if (document.activeElement === inp) continue;
    const counts = inp.codes.map((c) => deck[c] || 0);
    inp.value = String(counts[0]);
    const mixed = counts.some((n) => n !== counts[0]);
    inp.title = mixed ? t("rule.deck.mixed") : "";
    inp.classList.toggle("mixed", mixed);
  }
}

/** The link, its QR code and, when only this computer can open it, the warning. */
function showInvite() {
  const r = refs;
  const draw = (b) => {
    if (refs !== r) return;
    const url = `${b.base}/r/${S.code}`;
    if (r.linkEl.textContent !== url) r.linkEl.textContent = url;
    r.qr.show(b);
  };
  const known = knownBase();
  if (known) draw(known);
  else r.linkEl.textContent = inviteUrl();
  askInviteBase().then(draw);
}

export function resetLobby() {
  refs = null;
}
