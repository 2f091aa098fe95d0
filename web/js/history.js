// The night's scores (GET /api/rooms/{code}/history) and a step-by-step replay of a finished round
// (GET /api/rounds/{id}/replay), both asked with this player's token for the room. The panel is one
// element kept across renders: the lobby and the round-over overlay both show it.
import { cardFace, cardName, colorName } from "./cards.js";
import { S, name } from "./core.js";
import { replayMark } from "./deals.js";
import { h, replace } from "./dom.js";
import { describe } from "./events.js";
import { dealCheck } from "./fair-deal.js";
import { t } from "./i18n.js";
import { Api, Seats } from "./net.js";

const SHOWN = ["lobby", "round_over", "match_over"];
const RETRY_MS = 700;
const RETRIES = 10;
const PLAY_MS = 900;

let panel = null; // {root, body, lang}
let data = null; // last history answer
let fetchedKey = null;
let retryTimer = null;
let loading = false;

function ensurePanel() {
  if (panel && panel.lang === document.documentElement.lang) return panel;
  const body = h("div.hist-body");
  const root = h("section.panel.history", { "aria-labelledby": "hist-h" }, h("h2#hist-h", t("hist.title")), body);
  panel = { root, body, lang: document.documentElement.lang };
  draw();
  return panel;
}

/** The "Scores tonight" panel (one element; the caller places it). */
export function historyPanel() {
  return ensurePanel().root;
}

export function resetHistory() {
  clearTimeout(retryTimer);
  panel = null;
  data = null;
  fetchedKey = null;
}

/** Fetch when the room's status shows the panel; refetch when a round ends (rounds are written a moment later). */
export function syncHistory() {
  const v = S.view;
  if (!v || !SHOWN.includes(v.room.status)) return;
  const key = `${S.code}:${v.room.status}:${v.room.match}:${v.room.round}`;
  if (key === fetchedKey) return;
  fetchedKey = key;
  clearTimeout(retryTimer);
  load(key, 0);
}

/** The room's token this browser holds (the socket's, else the stored seat's). */
function token(code) {
  return S.sock && S.sock.code === code ? S.sock.token : Seats.get(code)?.token;
}

/** Whether the record's last round is the view's: its match and its number (each match counts
 * its rounds from 1, so the number alone matched the last match's same round). */
function hasCurrentRound(d, v) {
  const m = d?.matches?.[d.matches.length - 1];
  const r = m?.rounds?.[m.rounds.length - 1];
  return !!r && r.number === v.room.round && m.number === v.room.match;
}

async function load(key, attempt) {
  const code = S.code;
  loading = !data;
  draw();
  try {
    const got = await Api.history(code, token(code));
    if (fetchedKey !== key || S.code !== code) return;
    data = got;
  } catch {
    if (fetchedKey !== key) return;
    if (!data) data = { matches: [], failed: true };
  }
  loading = false;
  draw();
  const v = S.view;
  const ended = v && (v.room.status === "round_over" || v.room.status === "match_over");
  if (ended && !hasCurrentRound(data, v) && attempt < RETRIES) {
    retryTimer = setTimeout(() => {
      if (fetchedKey === key) load(key, attempt + 1);
    }, RETRY_MS);
  }
}

// The round that just ended, from the view, until the history (written a moment later) has it:
// "Scores tonight" shows it at once (without a replay yet).
function withCurrentRound(d) {
  const v = S.view;
  const g = v?.game;
  if (!v || !["round_over", "match_over"].includes(v.room.status) || !g?.winner || hasCurrentRound(d, v)) return d;
  const matches = [...(d?.matches || [])];
  const last = matches[matches.length - 1];
  const seats = v.players.map((p, seat) => ({ seat, id: p.id, name: p.name, score: p.score }));
  const round = { id: null, number: v.room.round, winner: g.winner, points: g.points ?? 0, seats };
  const won = v.room.status === "match_over" ? { winner: g.winner, winner_name: name(g.winner) } : {};
  if (last && !last.winner) matches[matches.length - 1] = { ...last, ...won, rounds: [...(last.rounds || []), round] };
  else matches.push({ number: v.room.match ?? (last?.number || 0) + 1, target_score: v.room.rules.target_score, ...won, rounds: [round] });
  return { ...d, matches };
}

function draw() {
  if (!panel) return;
  const matches = (withCurrentRound(data)?.matches || []).filter((m) => m.rounds && m.rounds.length);
  if (!matches.length) {
    replace(panel.body, h("p.note", loading ? t("hist.loading") : data?.failed ? t("hist.failed") : t("hist.empty")));
    return;
  }
  // newest match first: that is tonight's running game
  replace(panel.body, [...matches].reverse().map((m, i) => matchBlock(m, i === 0, matches.length > 1, matches)));
}

function matchBlock(m, current, several, all) {
  const target = m.target_score;
  const last = m.rounds[m.rounds.length - 1];
  const seats = [...(last.seats || [])].sort((a, b) => b.score - a.score);
  const standings = h("ol.hist-standings", { "aria-label": t("hist.standings", { target }) },
    seats.map((s) => {
      const pct = target ? Math.min(100, Math.round((s.score / target) * 100)) : 0;
      return h("li.score-row", { class: s.id === m.winner ? "win" : "", "data-player": s.id },
        h("span.sr-who", h("span.sr-name", s.name), s.id === S.you ? h("span.tag", ` (${t("lobby.you")})`) : null),
        h("span.sr-bar", { "aria-hidden": "true" }, h("span.fill", { style: { width: `${pct}%` } })),
        h("span.sr-score", `${s.score}`, target ? h("small", ` / ${target}`) : null));
    }));
  const rounds = h("ol.hist-rounds", m.rounds.map((r) => h("li.hist-round", { "data-round": r.id },
    h("span.hr-no", t("hist.round", { n: r.number })),
    h("span.hr-win", winnerName(r)),
    h("span.hr-pts", t("over.points", { n: r.points ?? 0 })),
    r.id == null ? null : h("button.btn.small.ghost.hr-replay", { type: "button", "aria-label": t("hist.replayRound", { n: r.number }),
      onclick: () => openReplay(r.id) }, t("hist.replay")),
    replayMark(r, all, data?.deals))));
  const head = several || m.winner
    ? h("h3.hist-match", t("hist.match", { n: m.number }), m.winner ? h("span.hist-champ", ` · ${t("hist.matchWon", { name: m.winner_name || name(m.winner) })}`) : null,
      current && !m.winner ? h("span.hist-now", ` · ${t("hist.now")}`) : null)
    : null;
  return h("div.hist-match-block", head, h("p.hint", t("hist.standings", { target })), standings, rounds);
}

function winnerName(r) {
  const s = (r.seats || []).find((x) => x.id === r.winner);
  return s ? s.name : name(r.winner);
}

// -- replay ---------------------------------------------------------------------------------------

async function openReplay(id) {
  const body = h("div.dlg-body.replay-body", h("p.note", { role: "status" }, t("hist.loading")));
  const dlg = h("dialog.dlg.dlg-replay", { "aria-labelledby": "replay-h" }, body);
  dlg.addEventListener("close", () => {
    clearInterval(dlg.timer);
    dlg.remove();
  });
  document.body.append(dlg);
  dlg.showModal();
  let rep;
  try {
    rep = await Api.replay(id, token(S.code));
  } catch {
    replace(body, h("h2#replay-h.dlg-title", t("hist.replayTitle", { n: "?" })), h("p.form-error", { role: "alert" }, t("hist.failed")),
      h("div.dlg-actions", h("button.btn.ghost", { type: "button", onclick: () => dlg.close() }, t("hist.close"))));
    return;
  }
  viewer(dlg, body, rep);
}

function viewer(dlg, body, rep) {
  const steps = rep.steps || [];
  const names = new Map((rep.round.seats || []).map((s) => [s.id, s.name]));
  const nm = (id) => names.get(id) || name(id);
  let i = 0;
  const counter = h("p.replay-count", { "aria-live": "polite" });
  const tableEl = h("div.replay-table");
  const eventsEl = h("ol.log.replay-events");
  const prev = h("button.btn", { type: "button", "data-key": "replay-prev", onclick: () => go(i - 1) }, `‹ ${t("hist.prev")}`);
  const play = h("button.btn.primary", { type: "button", "data-key": "replay-play", "aria-pressed": "false", onclick: () => toggle() }, t("hist.play"));
  const next = h("button.btn", { type: "button", "data-key": "replay-next", onclick: () => go(i + 1) }, `${t("hist.next")} ›`);
  const slider = h("input.replay-slider", { type: "range", min: 0, max: Math.max(0, steps.length - 1), value: 0,
    "aria-label": t("hist.step"), oninput: (e) => go(Number(e.target.value)) });

  function stop() {
    clearInterval(dlg.timer);
    dlg.timer = null;
    play.textContent = t("hist.play");
    play.setAttribute("aria-pressed", "false");
  }
  function toggle() {
    if (dlg.timer) {
      stop();
      return;
    }
    if (i >= steps.length - 1) go(0);
    play.textContent = t("hist.pause");
    play.setAttribute("aria-pressed", "true");
    dlg.timer = setInterval(() => {
      if (i >= steps.length - 1) stop();
      else go(i + 1, true);
    }, PLAY_MS);
  }
  function go(n, playing = false) {
    if (!playing) stop();
    i = Math.max(0, Math.min(steps.length - 1, n));
    show();
  }
  function show() {
    const st = steps[i];
    if (!st) return;
    counter.textContent = t("hist.stepOf", { n: i, total: steps.length - 1 });
    slider.value = String(i);
    prev.disabled = i === 0;
    next.disabled = i >= steps.length - 1;
    const lines = (st.events || []).map((ev) => describe(ev, nm, null)).filter(Boolean);
    replace(eventsEl, lines.length ? lines.map((d) => h("li", { class: d.cls || "" },
      (d.cards || []).length ? h("span.log-cards", { "aria-hidden": "true" }, d.cards.slice(0, 12).map((c) => cardFace(c, { size: "xs" }))) : null,
      h("span.log-text", d.text))) : h("li.meta", h("span.log-text", t("hist.noEvents"))));
    const v = st.table || {};
    const g = v.game || {};
    const turn = g.winner ? null : g.pending ? g.pending.player : g.turn;
    replace(tableEl,
      h("div.replay-center",
        g.top ? cardFace(g.top, { size: "md" }) : null,
        h("div.replay-info",
          g.top ? h("p", t("hist.top", { card: cardName(g.top) })) : null,
          g.color ? h("p.color-chip", { class: `cc-${g.color[0]}` }, h("span.swatch", { class: `sw-${g.color[0]}`, "aria-hidden": "true" }, t(`letter.${g.color[0]}`)),
            h("span", `${t("table.color")}: `, h("b", colorName(g.color)))) : null,
          g.stack ? h("p.replay-stack", `+${g.stack.total}`) : null,
          typeof g.draw_pile === "number" ? h("p.hint", t("table.drawPile", { n: g.draw_pile })) : null)),
      h("ul.replay-players", (v.players || []).map((p) => h("li.replay-player", {
        class: `${p.id === turn ? "turn" : ""}${p.eliminated ? " out" : ""}${p.id === g.winner ? " win" : ""}`, "data-player": p.id },
      h("span.rp-name", nm(p.id)),
      h("span.rp-cards", p.eliminated ? t("hist.out") : t("hist.cards", { n: p.cards ?? 0 }))))));
  }

  const r = rep.round;
  replace(body,
    h("h2#replay-h.dlg-title", t("hist.replayTitle", { n: r.number })),
    h("p.dlg-desc", t("hist.replayDesc", { name: nm(r.winner), n: r.points ?? 0 })),
    counter, slider,
    h("div.replay-controls", prev, play, next),
    tableEl,
    h("h3.replay-h3", t("hist.events")),
    eventsEl,
    r.id ? dealCheck(r.id, token(S.code)) : null,
    h("div.dlg-actions", h("button.btn.ghost", { type: "button", onclick: () => dlg.close() }, t("hist.close"))));
  show();
  next.focus();
}
