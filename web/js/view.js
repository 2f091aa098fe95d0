// Each new view from the socket: names and log lines from its events, the sounds and animations
// they call for, then the lobby or the table drawn again with the keyboard focus kept in place.
import { showChats, syncChat } from "./chat.js";
import { S, announce, rememberNames } from "./core.js";
import { refreshHowTo } from "./help/howto.js";
import { syncHistory } from "./history.js";
import { syncDeal } from "./deals.js";
import { t } from "./i18n.js";
import { renderLobby, resetLobby } from "./lobby.js";
import { releasePointerFocus } from "./dom.js";
import { lastLogText, logLength, pushLog } from "./log.js";
import { Api, Seats } from "./net.js";
import { notifyTurn } from "./notify.js";
import { app } from "./shell.js";
import { sound } from "./sound.js";
import { announceTurn, bringHandIntoView, renderTable, resetTable } from "./table.js";
import { confirmPlay, shownView } from "./table/actions.js";

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
        (fx.swaps ||= []).push(ev);
        break;
      case "passed_hands":
        fx.passed = true;
        break;
      case "drew":
      case "took_stack":
        (fx.draws ||= []).push(ev);
        break;
      case "uno":
        (fx.uno ||= new Set()).add(ev.player);
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

/** A short vibration on a phone when the turn comes (only once the page was touched: browsers allow no more). */
function buzz() {
  if (typeof navigator.vibrate !== "function" || navigator.userActivation?.hasBeenActive === false) return;
  try {
    navigator.vibrate([90, 60, 90]);
  } catch {
    /* a nicety */
  }
}

/** Whether the view waits for this player (their turn or their choice). */
function waitsForMe(view) {
  const g = view?.game;
  return !!g && !g.winner && view.room.status === "playing" && (g.pending ? g.pending.player : g.turn) === S.you;
}

// One sound a patch, the one that matters most to this player: a stack aimed at you also makes it
// your turn, a bot's play and your turn come together, and sounds at once are noise.
const SOUND_ORDER = ["win", "eliminated", "stack", "roulette", "turn", "uno", "draw", "play"];

/** The patch's sound (`confirmed`: the player's own play, heard when it was tapped). */
function soundsFor(events, prev, view, confirmed) {
  const heard = new Set();
  for (const ev of events) {
    if (ev.kind === "played" && ev !== confirmed) heard.add("play");
    else if ((ev.kind === "drew" || ev.kind === "took_stack") && ev.player === S.you) heard.add("draw");
    else if (ev.kind === "uno" || ev.kind === "exposed") heard.add("uno");
    else if (ev.kind === "roulette") heard.add("roulette");
    if (ev.kind === "exposed" && ev.player === S.you) announce(t("table.exposedYou", { s: view.room.rules.catch_window_s }));
    else if (ev.kind === "eliminated") heard.add("eliminated");
    else if (ev.kind === "round_over" && ev.winner === S.you) heard.add("win");
  }
  const ps = prev?.game?.stack;
  const ns = view.game?.stack;
  if (ns && ns.target === S.you && !view.game.winner && (!ps || ps.target !== S.you || ps.total !== ns.total)) heard.add("stack");
  const was = prev?.game && !prev.game.winner && (prev.game.pending ? prev.game.pending.player : prev.game.turn) === S.you;
  const now = view.game && !view.game.winner && (view.game.pending ? view.game.pending.player : view.game.turn) === S.you;
  if (now && !was) heard.add("turn");
  const loudest = SOUND_ORDER.find((name) => heard.has(name));
  if (loudest) sound(loudest);
  if (now && !was) {
    buzz();
    announceTurn();
    return true;
  }
  return false;
}

export function onState(view, info) {
  // before any change to the page, while its styles are still up to date (a cheap let-go)
  releasePointerFocus(document.getElementById("stage"));
  const prev = S.view;
  S.prev = prev;
  S.you = S.sock.you;
  // the player's own play, shown since its tap (table/actions.js), is settled by this patch; until
  // then the view shown is the server's less that card
  const confirmed = confirmPlay(info.events);
  S.view = shownView(view);
  S.version = info.version;
  if (typeof info.now === "number") S.skew = info.now - Date.now();
  rememberNames(view);
  // a page opened on a room (a reload, a newcomer) starts its log with the room's recent events
  const past = info.welcome && !prev && !logLength() ? info.log || [] : [];
  // a rules change is told as what it changed: from the rules the last view had (or the change
  // before it); the first change of a log the page opened with has nothing to compare with
  let rulesWere = prev?.room?.rules ?? null;
  for (const ev of [...past, ...info.events]) {
    if (ev.kind === "played") S.lastPlay = ev;
    if (ev.kind === "joined" && ev.name) S.names.set(ev.player, ev.name);
    if (ev.kind === "bot_added") {
      if (ev.name) S.names.set(ev.player, ev.name);
      if (ev.level) S.levels.set(ev.player, ev.level);
    }
    if (ev.kind === "bot_level" && ev.level) S.levels.set(ev.player, ev.level);
    if (ev.kind === "rules_changed") {
      pushLog({ ev, was: rulesWere });
      rulesWere = ev.rules ?? rulesWere;
    } else pushLog({ ev });
  }
  // in the log, not the ticker: a phone back on its room shows the last move there, not this
  if (info.welcome && !prev) pushLog({ key: "ev.connected", params: { code: S.code }, cls: "meta", quiet: true });
  let turnCame = false;
  if (!info.welcome || prev) turnCame = soundsFor(info.events, prev, view, confirmed);
  else if (view.game && !view.game.winner && view.game.turn === S.you) {
    announceTurn();
    turnCame = true;
  }
  if (turnCame) notifyTurn(S.code);
  Seats.touch(S.code);
  if (info.welcome && view.players.some((p) => p.bot && !p.level && !S.levels.has(p.id))) fetchLevels();
  const fx = computeFx(prev, S.view, info.events, info.welcome);
  if (confirmed && fx.played === confirmed) delete fx.played; // it flew to the pile when tapped
  render(fx);
  showChats(info.events, info.welcome);
  if (turnCame && view.room.status === "playing") requestAnimationFrame(bringHandIntoView);
}

function fetchLevels() {
  Api.room(S.code).then((summary) => {
    for (const seat of summary.seats || []) if (seat.level) S.levels.set(seat.id, seat.level);
    render({});
  }).catch(() => {});
}

export function render(fx = {}) {
  const stage = document.getElementById("stage");
  if (!stage || !S.view) return;
  const active = document.activeElement;
  const focusKey = active && active !== document.body ? active.dataset?.key || (active.id ? `#${active.id}` : null) : null;
  const handIndex = [...document.querySelectorAll(".hand .hand-card")].indexOf(active);
  const status = S.view.room.status;
  if (document.body.dataset.status !== status) document.body.dataset.status = status;
  document.body.dataset.version = String(S.version);
  // the tab says so when the turn is yours (a player looking at another tab or app); written only
  // when it changes (a title written again is sent to the browser's process again)
  const title = waitsForMe(S.view) ? t("title.yourTurn") : `${S.code} · ${t("app.name")}`;
  if (document.title !== title) document.title = title;
  if (status === "lobby") {
    resetTable();
    renderLobby(stage);
  } else {
    resetLobby();
    renderTable(stage, fx);
    // a table built after this patch's events were logged starts with the latest line
    const ticker = document.getElementById("ticker");
    const last = lastLogText();
    if (ticker && !ticker.textContent && last !== null) ticker.textContent = last;
  }
  syncHistory();
  syncDeal();
  syncChat();
  refreshHowTo(S.view.room.rules);
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
