// The big screen between rounds: the round's key moments (the story's `moments`, its biggest
// swings: app/history/story.py key_moments), one after another, then the table again. Anyone in
// the room can skip it: the button, or Escape.
import { cardFace } from "./cards.js";
import { h, replace } from "./dom.js";
import { describe } from "./events.js";
import { t } from "./i18n.js";
import { avatar } from "./lobby.js";
import { fetchStory } from "./story.js";

const MOMENT_MS = 4000;
const M = { key: null, timer: null, el: null };

function stop() {
  clearTimeout(M.timer);
  M.timer = null;
  M.el?.remove();
  M.el = null;
  document.removeEventListener("keydown", onKey);
}

function onKey(e) {
  if (e.key === "Escape") stop();
}

/** Called with every view of the big screen (tv.js): a round that just ended (not a match: its
 * story shows instead) replays its key moments once; any other status ends a replay. */
export function tvMoments(code, token, view) {
  const root = document.getElementById("tv");
  if (!root || view.room.status !== "round_over") {
    M.key = null;
    stop();
    return;
  }
  const key = `${code}:${view.room.match}:${view.room.round}`;
  if (M.key === key) {
    if (M.el && !M.el.isConnected) root.append(M.el); // the screen was drawn anew (a language)
    return;
  }
  M.key = key;
  stop();
  fetchStory(code, token, view.room.match, view.room.round, () => M.key === key).then((story) => {
    const moments = story?.moments || [];
    if (M.key !== key || !moments.length || !story.last || story.last.round !== view.room.round) return;
    play(root, story, view.room.round, moments);
  });
}

function play(root, story, round, moments) {
  const players = new Map(story.players.map((p) => [p.id, p]));
  const nameOf = (id) => players.get(id)?.name || "?";
  const counter = h("p.tv-moment-count", { "aria-live": "polite" });
  const body = h("div.tv-moment");
  M.el = h("section.tv-moments", { "aria-labelledby": "tv-moments-h" },
    h("div.tv-moments-head", h("h2#tv-moments-h", t("moments.title", { n: round })),
      h("button.btn.tv-moments-skip", { type: "button", "data-key": "moments-skip", onclick: stop }, t("story.skip"))),
    counter, body);
  root.append(M.el);
  document.addEventListener("keydown", onKey);
  const show = (i) => {
    if (!M.el) return;
    if (i >= moments.length) {
      stop();
      return;
    }
    const m = moments[i];
    counter.textContent = t("moments.count", { n: i + 1, total: moments.length });
    M.el.dataset.step = String(m.step);
    const lines = m.events.map((ev) => describe(ev, nameOf, null)).filter((d) => d && d.cls !== "meta");
    replace(body,
      h("ol.tv-moment-events", lines.map((d) => h("li", { class: d.cls || "" },
        (d.cards || []).length ? h("span.log-cards", { "aria-hidden": "true" }, d.cards.slice(0, 12).map((c) => cardFace(c, { size: "xs" }))) : null,
        h("span.log-text", d.text)))),
      h("ul.tv-moment-hands", Object.entries(m.hands).map(([id, n]) => h("li", { "data-player": id },
        avatar(players.get(id) || { id, name: "?" }), h("span.story-name", nameOf(id)), h("b", t("hist.cards", { n }))))));
    M.timer = setTimeout(() => show(i + 1), MOMENT_MS);
  };
  show(0);
}
