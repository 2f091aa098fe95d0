// The round-over and match-over panel: winner, reason, scores, the hands left, who watches, and
// the host's next step (the next round or a new match, or back to the lobby).
import { cardFace, sortHand } from "../cards.js";
import { S, botLevel, isHost, name, send } from "../core.js";
import { replayDealButton, shareDealButton } from "../deals.js";
import { h, replace } from "../dom.js";
import { fairDealMark, noteCommitment } from "../fair-deal.js";
import { historyPanel } from "../history.js";
import { lang, t } from "../i18n.js";
import { botLevelPicker, spectatorList } from "../members.js";
import { storyPanel } from "../story.js";
import { matchReason, pointsExplained } from "./points.js";
import { T } from "./state.js";

// The panel lies over the table; the table grows to hold all of it (scores, cards left, the
// night's scores once they load), so the page scrolls to them instead of a box inside the table
// that hid its end on a phone.
function fitOverlay() {
  const fit = () => {
    if (!T) return; // the table is gone (back to the lobby) and the panel with it
    const panel = T.overlay.firstElementChild;
    // the overlay's padding (16 px a side) and the table's own borders
    const extra = 32 + T.root.offsetHeight - T.root.clientHeight;
    if (panel && !T.overlay.hidden) T.root.style.setProperty("--over-h", `${panel.offsetHeight + extra}px`);
  };
  if (!T.overFit && "ResizeObserver" in window) T.overFit = new ResizeObserver(fit);
  T.overFit?.disconnect();
  if (T.overlay.firstElementChild) T.overFit?.observe(T.overlay.firstElementChild, { box: "border-box" });
  fit();
}

export function renderOverlay(v) {
  noteCommitment(v); // from the deal on: the hash the seed must match at round over
  const status = v.room.status;
  const over = status === "round_over" || status === "match_over";
  T.overlay.hidden = !over;
  T.root.classList.toggle("is-over", over);
  if (!over) {
    T.overKey = null;
    T.overFit?.disconnect();
    T.root.style.removeProperty("--over-h");
    return;
  }
  const g = v.game;
  const watchers = (v.room.spectators || []).map((s) => `${s.id}${s.connected ? "+" : "-"}`).join();
  const levels = v.players.map((p) => botLevel(p) || "").join();
  const key = `${v.room.round}:${status}:${isHost()}:${v.room.host}:${lang()}:${v.players.map((p) => `${p.connected}`).join()}:${watchers}:${levels}:${!!v.room.night_over}`;
  if (T.overKey === key) return;
  const firstTime = !T.overKey || !T.overKey.startsWith(`${v.room.round}:${status}`);
  T.overKey = key;
  const match = status === "match_over";
  const rules = v.room.rules;
  const youWin = g.winner === S.you;
  const big = youWin ? t(match ? "over.youWinMatch" : "over.youWinRound")
    : t(match ? "over.winsMatch" : "over.winsRound", { name: name(g.winner) });
  const target = rules.target_score;
  const rows = [...v.players].sort((a, b) => b.score - a.score).map((p) => {
    const pct = Math.min(100, Math.round((p.score / target) * 100));
    return h("li.score-row", { class: `${p.id === g.winner ? "win" : ""}${p.eliminated ? " out" : ""}`, "data-player": p.id },
      h("span.sr-who", h("span.sr-name", p.name), p.id === S.you ? h("span.tag", ` (${t("lobby.you")})`) : null),
      h("span.sr-bar", { "aria-hidden": "true" }, h("span.fill", { style: { width: `${pct}%` } })),
      h("span.sr-score", `${p.score}`, p.id === g.winner && g.points ? h("small", ` +${g.points}`) : null));
  });
  const revealed = Object.entries(g.revealed || {}).filter(([, cards]) => cards.length);
  // with scoring, each hand with its points (the winner's not counted), the knock-out bonus and the sum
  const hands = rules.scoring ? pointsExplained(v) : revealed.length ? h("div.revealed", h("h3", t("over.hands")),
    h("ul", revealed.map(([id, cards]) => h("li", h("span.rv-name", name(id)),
      h("span.rv-cards", sortHand(cards).map((c) => cardFace(c, { size: "xs" }))))))) : null;
  const actions = isHost()
    ? [h("button.btn.primary.big.rematch", { type: "button", "data-key": "rematch", onclick: () => send("rematch") }, t(match ? "over.newMatch" : "over.rematch")),
      replayDealButton(),
      ...shareDealButton(v),
      h("button.btn.big.to-lobby", { type: "button", "data-key": "to-lobby", onclick: () => send("lobby") }, t("over.toLobby")),
      v.room.night_over ? null : h("button.btn.ghost.big.end-night", { type: "button", "data-key": "end-night", onclick: () => send("end_night") }, t("over.endNight"))]
    : h("p.note", { role: "status" }, t(match ? "over.waitHostMatch" : "over.waitHost", { name: name(v.room.host) }));
  // the host sets the bots' levels for the next round here too, without a trip to the lobby
  const bots = isHost() ? v.players.filter((p) => p.bot && botLevel(p)) : [];
  const botLevels = bots.length ? h("div.over-bots", h("h3", t("over.botLevels")),
    h("ul", bots.map((p) => h("li", { "data-player": p.id }, h("span.ob-name", p.name), botLevelPicker(p))))) : null;
  const panel = h("section.over-panel", { class: match ? "match" : "", role: "region", "aria-labelledby": "over-h" },
    h("p.over-kicker", t(match ? "over.match" : "over.round", { n: v.room.round })),
    h("h2#over-h.over-title", { tabindex: "-1" }, big),
    h("p.over-reason", [t(`over.reason.${g.reason || "out"}`), rules.scoring ? ` · ${t("over.points", { n: g.points ?? 0 })}` : ""].join("")),
    match && rules.scoring ? h("p.over-why", matchReason(v)) : null,
    rules.scoring ? h("div.scores", h("h3", t("over.scores", { target })), h("ol.score-list", rows)) : h("p.note", t("over.noScoring")),
    hands,
    fairDealMark(v),
    spectatorList(v.room),
    botLevels,
    h("div.over-actions", actions),
    storyPanel(),
    historyPanel());
  replace(T.overlay, panel);
  fitOverlay();
  if (firstTime) {
    const title = panel.querySelector(".over-title");
    requestAnimationFrame(() => title.focus({ preventScroll: false }));
  }
}
