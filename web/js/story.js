// The night's story (GET /api/rooms/{code}/story, app/history/story.py): matches and rounds won
// tonight, a few awards, the bots against the people. A phone shows it on the match-over panel
// (on the round-over panel behind a button) and can save it as a PNG drawn on a canvas, or share
// that file where the browser can; the big screen shows it at match over (tv.js).
import { S } from "./core.js";
import { h, replace } from "./dom.js";
import { lang, t } from "./i18n.js";
import { avatar } from "./lobby.js";
import { Api, Seats } from "./net.js";

const RETRY_MS = 700;
const RETRIES = 10;
// plain symbols, which every system's fonts have (an emoji font is missing on many Linux TVs)
const ICONS = { biggest_stack: "☰", biggest_roulette: "⟳", knockouts: "✖", closest_escape: "⚠", uno_streak: "⚡" };

const P = { root: null, body: null, lang: null, key: null, open: false, clicked: null, story: null, failed: false };

/** Whether ``story`` already tells the round the view shows (rounds reach the record a moment later). */
export function storyHasRound(story, match, round) {
  return !!story?.last && story.last.match === match && story.last.round === round;
}

/** The story, read again until it tells round ``round`` of match ``match`` (or tries run out). */
export async function fetchStory(code, token, match, round, alive = () => true) {
  let story = null;
  for (let i = 0; i < RETRIES && alive(); i += 1) {
    try {
      story = await Api.story(code, token);
    } catch {
      story = story || null;
    }
    if (!alive() || storyHasRound(story, match, round) || match == null) break;
    await new Promise((ok) => setTimeout(ok, RETRY_MS));
  }
  return story;
}

function token(code) {
  return S.sock && S.sock.code === code ? S.sock.token : Seats.get(code)?.token;
}

function player(story, id) {
  return story.players.find((p) => p.id === id) || { id, name: "?", hue: 0 };
}

/** An award's line: "Ann took a stack of 12". */
export function awardText(story, a) {
  const who = player(story, a.player).name;
  return t(`story.award.${a.key}`, { name: who, n: a.value, limit: a.mercy_limit ?? "?" });
}

/** Bots played tonight: their rounds against the people's are worth a line, even at none. */
function withBots(story) {
  return story.players.some((p) => p.bot);
}

function summaryText(story) {
  return `${t("story.rounds", { n: story.rounds })} · ${t("story.matches", { n: story.matches })}`;
}

/** The story as a board (phone and TV alike; story.css makes it large on the TV). */
export function storyBoard(story, extra = null) {
  const summary = summaryText(story);
  if (!story.rounds) return h("div.story-board", h("p.note", t("story.empty")), extra);
  const standings = h("ol.story-players", story.players.map((p) => h("li.story-player", { "data-player": p.id },
    avatar(p),
    h("span.story-name", p.name),
    h("span.story-won", p.matches_won ? h("b.story-stars", `★ ${p.matches_won}`) : null,
      h("span.story-rounds", t("story.roundsWon", { n: p.rounds_won }))))));
  const awards = h("ul.story-awards", story.awards.map((a) => {
    const p = player(story, a.player);
    return h("li.story-award", { "data-award": a.key, "data-player": a.player, style: { "--hue": String(p.hue ?? 200) } },
      h("span.story-icon", { "aria-hidden": "true" }, ICONS[a.key] || "★"),
      h("span.story-award-body", h("span.story-award-title", t(`story.title.${a.key}`)),
        h("span.story-award-text", awardText(story, a))));
  }));
  const vs = story.bots_vs_people;
  return h("div.story-board",
    h("p.story-summary", summary),
    standings,
    story.awards.length ? awards : h("p.note", t("story.noAwards")),
    withBots(story) ? h("p.story-vs", { "data-key": "bots-vs-people" }, t("story.botsVsPeople", { bots: vs.bots, people: vs.people })) : null,
    extra);
}

// -- the image ------------------------------------------------------------------------------------

/** The story drawn on a canvas: a PNG blob. */
export function storyImage(story, code) {
  const W = 1080;
  const rowH = 84;
  const height = 260 + story.players.length * rowH + story.awards.length * 110 + 140;
  const c = document.createElement("canvas");
  c.width = W;
  c.height = height;
  const g = c.getContext("2d");
  const bg = g.createLinearGradient(0, 0, 0, height);
  bg.addColorStop(0, "#1d2340");
  bg.addColorStop(1, "#0d1020");
  g.fillStyle = bg;
  g.fillRect(0, 0, W, height);
  const font = (px, weight = 600) => `${weight} ${px}px system-ui, -apple-system, "Segoe UI", sans-serif`;
  g.textBaseline = "middle";
  g.fillStyle = "#ffd34d";
  g.font = font(64, 800);
  g.fillText(t("story.title"), 60, 90);
  g.fillStyle = "#b8bfdc";
  g.font = font(34);
  g.fillText(`${summaryText(story)} · ${code}`, 60, 160);
  let y = 250;
  for (const p of story.players) {
    g.fillStyle = `hsl(${p.hue ?? 200} 55% 45%)`;
    g.beginPath();
    g.arc(90, y, 30, 0, Math.PI * 2);
    g.fill();
    g.fillStyle = "#fff";
    g.font = font(32, 800);
    g.textAlign = "center";
    g.fillText(([...p.name][0] || "?").toUpperCase(), 90, y + 2);
    g.textAlign = "left";
    g.font = font(40, 700);
    g.fillText(p.name, 140, y);
    g.textAlign = "right";
    g.fillStyle = "#ffd34d";
    g.font = font(36, 700);
    const won = `${p.matches_won ? `★ ${p.matches_won}   ` : ""}${t("story.roundsWon", { n: p.rounds_won })}`;
    g.fillText(won, W - 60, y);
    g.textAlign = "left";
    y += rowH;
  }
  y += 20;
  for (const a of story.awards) {
    const p = player(story, a.player);
    g.fillStyle = `hsl(${p.hue ?? 200} 45% 25%)`;
    g.fillRect(60, y - 45, W - 120, 96);
    g.fillStyle = "#fff";
    g.font = font(48, 400);
    g.fillText(ICONS[a.key] || "★", 80, y + 2);
    g.fillStyle = "#b8bfdc";
    g.font = font(26, 700);
    g.fillText(t(`story.title.${a.key}`).toUpperCase(), 160, y - 20);
    g.fillStyle = "#fff";
    g.font = font(34, 600);
    g.fillText(awardText(story, a), 160, y + 20, W - 240);
    y += 110;
  }
  const vs = story.bots_vs_people;
  g.fillStyle = "#b8bfdc";
  g.font = font(32);
  if (withBots(story)) g.fillText(t("story.botsVsPeople", { bots: vs.bots, people: vs.people }), 60, y + 10);
  g.fillStyle = "#6f7799";
  g.font = font(26);
  g.fillText("Mercyless", 60, height - 50);
  return new Promise((ok, fail) => c.toBlob((b) => (b ? ok(b) : fail(new Error("no image"))), "image/png"));
}

function fileName(code) {
  return `mercyless-night-${code}.png`;
}

async function saveImage(story, code) {
  const blob = await storyImage(story, code);
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: fileName(code), hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

async function shareImage(story, code) {
  const file = new File([await storyImage(story, code)], fileName(code), { type: "image/png" });
  try {
    await navigator.share({ files: [file], title: t("story.title") });
  } catch {
    // cancelled, or refused: the save button is still there
  }
}

function canShareFiles() {
  try {
    const probe = new File([new Blob()], "x.png", { type: "image/png" });
    return !!navigator.canShare && navigator.canShare({ files: [probe] });
  } catch {
    return false;
  }
}

function imageActions(story, code) {
  return h("div.story-actions",
    h("button.btn.story-save", { type: "button", "data-key": "story-save", onclick: () => saveImage(story, code) }, t("story.save")),
    canShareFiles() ? h("button.btn.story-share", { type: "button", "data-key": "story-share", onclick: () => shareImage(story, code) }, t("story.share")) : null);
}

// -- the phone's panel ----------------------------------------------------------------------------

function draw() {
  if (!P.root) return;
  if (!P.open) {
    replace(P.body, h("button.btn.story-open", { type: "button", "data-key": "story-open", onclick: () => {
      P.clicked = roundKey();
      syncStory();
      draw();
    } }, t("story.show")));
    return;
  }
  if (!P.story) {
    replace(P.body, h("p.note", { role: "status" }, P.failed ? t("story.failed") : t("story.loading")));
    return;
  }
  replace(P.body, storyBoard(P.story, imageActions(P.story, S.code)));
}

/** The story's section on the round-over and match-over panel (one element kept across renders).
 * At match over it opens by itself; after a round, a button opens it. */
export function storyPanel() {
  if (!P.root || P.lang !== lang()) {
    P.body = h("div.story-body");
    P.root = h("section.panel.story", { "aria-labelledby": "story-h" }, h("h2#story-h", t("story.title")), P.body);
    P.lang = lang();
  }
  syncStory();
  draw();
  return P.root;
}

function roundKey() {
  const v = S.view;
  return `${S.code}:${v?.room.match}:${v?.room.round}`;
}

function syncStory() {
  const v = S.view;
  const over = v && ["round_over", "match_over"].includes(v.room.status);
  const key = roundKey();
  // at match over by itself, and once the host ended the night; after a round once asked for,
  // that round only
  P.open = !!over && (v.room.status === "match_over" || !!v.room.night_over || P.clicked === key);
  if (!P.open) return;
  if (P.key === key) return;
  P.key = key;
  P.story = null;
  P.failed = false;
  const code = S.code;
  fetchStory(code, token(code), v.room.match, v.room.round, () => P.key === key).then((story) => {
    if (P.key !== key) return;
    P.story = story;
    P.failed = !story;
    draw();
  });
}

// -- the big screen ---------------------------------------------------------------------------

const TV = { key: null, story: null, shown: null };

/** At match over the big screen shows the story over its table (the scores beside it stay);
 * any other status takes it away. Called with every view (tv.js). */
export function tvStory(code, token, view) {
  const root = document.getElementById("tv");
  const old = root?.querySelector(":scope > .tv-story");
  if (!root || !(view.room.status === "match_over" || (view.room.status === "round_over" && view.room.night_over))) {
    old?.remove();
    TV.key = null;
    TV.story = null;
    return;
  }
  const key = `${code}:${view.room.match}:${view.room.round}`;
  if (TV.key !== key) {
    TV.key = key;
    TV.story = null;
    fetchStory(code, token, view.room.match, view.room.round, () => TV.key === key).then((story) => {
      if (TV.key !== key) return;
      TV.story = story;
      tvStory(code, token, view);
    });
  }
  const shown = `${key}:${lang()}:${TV.story ? "told" : "waiting"}`;
  if (old && TV.shown === shown) return;
  TV.shown = shown;
  const body = TV.story ? storyBoard(TV.story) : h("p.note", { role: "status" }, t("story.loading"));
  const section = h("section.tv-story", { "aria-labelledby": "tv-story-h" }, h("h2#tv-story-h", t("story.title")), body);
  if (old) old.replaceWith(section);
  else root.append(section);
}
