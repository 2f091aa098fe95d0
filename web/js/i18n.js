// The strings of every language (one file each in i18n/) and the lookup: t("key", {name: "Ann"})
// fills {name}; a string missing in a language falls back to English, a missing key shows the key
// (so a gap is visible, never a crash).
import { en } from "./i18n/en.js";
import { nl } from "./i18n/nl.js";

export const LANGS = { en, nl };
export const LANG_NAMES = { en: "English", nl: "Nederlands" };
const KEY = "mercyless.lang";
let current = "en";

export function detectLang() {
  const saved = localStorage.getItem(KEY);
  if (saved && LANGS[saved]) return saved;
  for (const l of navigator.languages || [navigator.language || "en"]) {
    const base = String(l).toLowerCase().split("-")[0];
    if (LANGS[base]) return base;
  }
  return "en";
}

export function setLang(lang, persist = false) {
  current = LANGS[lang] ? lang : "en";
  document.documentElement.lang = current;
  if (persist) localStorage.setItem(KEY, current);
}

export function lang() {
  return current;
}

export function has(key) {
  return key in LANGS[current] || key in en;
}

export function t(key, params = {}) {
  // "{n} cards" with n = 1 reads "1 card": a key may have a ".one" form for that
  const one = params.n === 1 ? (LANGS[current][`${key}.one`] ?? en[`${key}.one`]) : undefined;
  let s = one ?? LANGS[current][key] ?? en[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (m, k) => (k in params ? String(params[k]) : m));
}
