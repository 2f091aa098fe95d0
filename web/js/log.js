// The room's log ("What happened"): each event in words, with the cards it names; the same line
// again is counted, not repeated. Its last line is also the phone's ticker.
import { cardFace } from "./cards.js";
import { S, name } from "./core.js";
import { h, replace } from "./dom.js";
import { describe } from "./events.js";
import { t } from "./i18n.js";

const LOG_MAX = 250;
// lines kept in the page: with their card faces the whole log was a third of the page's elements.
// The rest stay in `log` (a change of language draws them again; a reload gets welcome.log)
const LOG_DOM = 60;
const log = []; // {ev, host} or {key, params, cls} (words in the language of the moment) or {text, cls}

export function clearLog() {
  log.length = 0;
}

export function logLength() {
  return log.length;
}

// the rules a change may name, in the lobby's order; a key not here changes the line to the plain one
const RULES = ["draw", "stacking", "first_card", "reverse4_two_players", "discard_all_top", "seven", "zero",
  "roulette_chooser", "scoring", "mercy_limit", "hand_size", "uno_penalty", "catch_window_s", "target_score",
  "turn_timer_s", "deck"];
const CARD_COUNTS = ["mercy_limit", "hand_size", "uno_penalty"];

function deckTotal(deck) {
  return Object.values(deck || {}).reduce((sum, n) => sum + (Number(n) || 0), 0);
}

/** A rule's value in words, as the lobby shows it ("5 cards", "Off", a choice's text quoted);
 * `bare`: a number without its unit (the old value, the new one saying it: "from 7 to 5 cards"). */
function ruleValue(key, value, bare = false) {
  if (key === "deck") return t("rule.deck.total", { n: deckTotal(value) });
  if (typeof value === "boolean") return t(`rule.scoring.${value}`);
  if (typeof value === "string") return t("ev.rule_value", { v: t(`rule.${key}.${value}`) });
  if (key === "turn_timer_s" && value === 0) return t("rule.scoring.false");
  const unit = key.endsWith("_s") ? t("unit.s") : key === "target_score" ? t("unit.pts") : CARD_COUNTS.includes(key) ? t("unit.cards") : "";
  return unit && !bare ? `${value} ${unit}` : String(value);
}

/** "The host changed Hand size from 7 to 5 cards" (several rules: each listed), from the rules
 * before the change (`was`: a guest read only "The host changed the rules ×2" before). */
function rulesLine(entry) {
  const now = entry.ev.rules;
  const was = entry.was;
  const by = entry.host ? name(entry.host) : t("ev.theHost");
  const plain = { text: t("ev.rules_changed"), cls: "meta" };
  if (!was || !now || typeof was !== "object" || typeof now !== "object") return plain;
  const changed = RULES.filter((key) => key in now && JSON.stringify(now[key]) !== JSON.stringify(was[key]));
  if (!changed.length) return plain;
  const parts = changed.map((key) => {
    const numbers = typeof was[key] === "number" && was[key] !== 0 && typeof now[key] === "number" && now[key] !== 0;
    return { key, rule: t(`rule.${key}`), was: ruleValue(key, was[key], numbers && key !== "deck"), now: ruleValue(key, now[key]) };
  });
  if (parts.length === 1) {
    const [p] = parts;
    // a deck of the same size with other cards: its total says nothing
    if (p.was === p.now) return { text: t("ev.rule_changed_plain", { by, rule: p.rule }), cls: "meta" };
    return { text: t("ev.rule_changed", { by, rule: p.rule, was: p.was, now: p.now }), cls: "meta" };
  }
  const changes = parts.map((p) => (p.was === p.now ? p.rule : t("ev.rule_change", p))).join("; ");
  return { text: t("ev.rules_changed_list", { by, changes }), cls: "meta" };
}

/** An entry's words now: an event or a key is described again (after a change of language). */
function words(entry) {
  if (entry.ev?.kind === "rules_changed") return rulesLine(entry);
  if (entry.ev) return describe(entry.ev, name, S.you, entry.host);
  if (entry.key) return { text: t(entry.key, entry.params || {}), cls: entry.cls };
  return entry;
}

/** The text of the latest line the ticker shows (not a `quiet` one: "Connected to room…");
 * null before the first. */
export function lastLogText() {
  for (let i = log.length - 1; i >= 0; i--) if (!log[i].quiet) return log[i].text || "";
  return null;
}

function logLine(entry) {
  const d = words(entry);
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

export function pushLog(entry) {
  const ol = document.getElementById("log");
  const last = log[log.length - 1];
  if (entry.ev) entry.host ??= S.view?.room?.host ?? null; // who ran the room when it happened
  const d = words(entry);
  if (!d) return;
  entry.text = d.text;
  const ticker = document.getElementById("ticker");
  if (ticker && !entry.quiet) ticker.textContent = d.text;
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
  while (ol.children.length > LOG_DOM) ol.firstChild.remove();
  toEnd(ol);
}

// the log follows its last line, once a frame: reading its height after each line forced a layout
// of the page per event of a patch. A closed log (a phone's "What happened") is not measured at all
// (a layout of the page each patch on a slow phone): it goes to its end when it opens.
let scrollFrame = 0;
function toEnd(ol) {
  if (scrollFrame) return;
  const details = ol.closest("details");
  if (details && !details.open) {
    if (!details.dataset.follow) {
      details.dataset.follow = "1";
      details.addEventListener("toggle", () => {
        if (details.open) ol.scrollTop = ol.scrollHeight;
      });
    }
    return;
  }
  scrollFrame = requestAnimationFrame(() => {
    scrollFrame = 0;
    ol.scrollTop = ol.scrollHeight;
  });
}

export function renderLog() {
  const ol = document.getElementById("log");
  if (!ol) return;
  replace(ol, log.slice(-LOG_DOM).map(logLine).filter(Boolean));
  ol.scrollTop = ol.scrollHeight;
}
