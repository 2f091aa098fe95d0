// What a card does under a room's rules (rules.md "Card effects", "Draw stacking", "Ending and
// scoring"), in the language in use: a title and a few sentences, filled in from the room's
// options (stacking, sevens, zeros, Discard All's top, the roulette's chooser, Reverse +4 with two
// players, scoring).
import { cardName, colorName, parse } from "../cards.js";
import { lang, t } from "../i18n.js";
import { en } from "./text-en.js";
import { nl } from "./text-nl.js";

const TEXTS = { en, nl };
const DRAW_VALUE = { draw2: 2, draw4: 4, reverse4: 4, draw6: 6, draw10: 10 };

/** The help strings' lookup (the same {placeholder} and ".one" forms as i18n.js's t). */
export function ht(key, params = {}) {
  const texts = TEXTS[lang()] || en;
  const one = params.n === 1 ? (texts[`${key}.one`] ?? en[`${key}.one`]) : undefined;
  const s = one ?? texts[key] ?? en[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (m, k) => (k in params ? String(params[k]) : m));
}

export function drawValue(kind) {
  return DRAW_VALUE[kind] || 0;
}

function points(p) {
  if (p.number !== null) return p.number;
  return p.wild ? 50 : 20;
}

function stackRule(value, rules) {
  const mode = rules.stacking || "ladder";
  return ht(`help.stack.${mode}`, { n: value });
}

/**
 * {title, kind, lines, effect} for card `code` under `rules` (a room's, as the view carries them):
 * `lines` every sentence (what it plays on, what it does, as a last card, its points), `effect`
 * only what it does, `kind` its name without a colour.
 */
export function cardHelp(code, rules = {}) {
  const p = parse(code);
  const lines = [];
  let plays;
  const color = colorName(p.color).toLowerCase();
  const kind = p.number !== null ? String(p.number) : t(`kind.${p.kind}`);
  // what it plays on
  if (p.wild) plays = ht("help.plays.wild");
  else if (p.number !== null) plays = ht("help.plays.number", { color, n: p.number });
  else plays = ht("help.plays.action", { color, kind });
  // what it does
  const v = drawValue(p.kind);
  if (p.number === 7 && rules.seven && rules.seven !== "off") lines.push(ht(`help.seven.${rules.seven}`));
  else if (p.number === 0 && rules.zero === "pass") lines.push(ht("help.zero.pass"));
  else if (p.number !== null) lines.push(ht("help.number"));
  else if (p.kind === "skip" || p.kind === "skipall" || p.kind === "reverse") lines.push(ht(`help.${p.kind}`));
  else if (p.kind === "discard") {
    lines.push(ht("help.discard", { color }));
    lines.push(ht(rules.discard_all_top === "choose" ? "help.discard.choose" : "help.discard.top"));
  } else if (p.kind === "reverse4") {
    lines.push(ht("help.reverse4", { stack: stackRule(v, rules) }));
    lines.push(ht(rules.reverse4_two_players === "opponent" ? "help.reverse4.opponent" : "help.reverse4.self"));
  } else if (v) {
    lines.push(ht(p.wild ? "help.wilddraw" : "help.draw", { n: v, stack: stackRule(v, rules) }));
  } else if (p.kind === "roulette") {
    lines.push(ht(rules.roulette_chooser === "player" ? "help.roulette.player" : "help.roulette.target"));
    lines.push(ht("help.roulette.nostack"));
  } else if (p.kind === "wild") lines.push(ht("help.wild"));
  if (v && rules.stacking !== "off") lines.push(ht("help.stack.take"));
  const effect = [...lines];
  if (["skip", "skipall", "reverse"].includes(p.kind)) lines.push(ht("help.plays.stack"));
  if (p.number === null || p.number === 0 || p.number === 7) lines.push(ht("help.last"));
  if (rules.scoring !== false) lines.push(ht("help.points", { n: points(p) }));
  return { title: cardName(code), kind: p.number !== null ? String(p.number) : t(`kind.${p.kind}`), lines: [plays, ...lines], effect };
}
