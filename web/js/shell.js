// What every screen has around its content: the brand (a link home), the language picker, the sound
// switch, the toasts and the screen-reader announcements.
import { S } from "./core.js";
import { h, replace } from "./dom.js";
import { LANG_NAMES, LANGS, lang, setLang, t } from "./i18n.js";
import { leaveToLanding, rebuild } from "./room.js";
import { setSound, sound, soundOn } from "./sound.js";
import { openSettings } from "./theme.js";

export const app = document.getElementById("app");

// On a phone the closed picker shows the language's code ("NL": "Nederlands" was cut), its options
// the whole names: the select lies transparent over the code, as a rule's choice in the lobby does.
export function langSelect() {
  const select = h("select.lang", { "aria-label": t("lang.label"), title: t("lang.label"),
    onchange: (e) => {
      setLang(e.target.value, true);
      rebuild();
    } },
  Object.keys(LANGS).map((l) => h("option", { value: l, selected: l === lang() }, LANG_NAMES[l])));
  return h("span.lang-pick", select, h("span.lang-face", { "aria-hidden": "true" }, lang().toUpperCase()));
}

export function soundToggle() {
  const on = soundOn();
  return h("button.icon-btn.sound", { type: "button", "aria-pressed": String(on), "aria-label": t(on ? "sound.on" : "sound.off"),
    title: t(on ? "sound.on" : "sound.off"),
    onclick: (e) => {
      setSound(!soundOn());
      const b = e.currentTarget;
      b.setAttribute("aria-pressed", String(soundOn()));
      b.setAttribute("aria-label", t(soundOn() ? "sound.on" : "sound.off"));
      b.title = t(soundOn() ? "sound.on" : "sound.off");
      replace(b, soundIcon(soundOn()));
      if (soundOn()) sound("play");
    } }, soundIcon(on));
}

/** ⚙: the settings (the card theme, the sound); the bar's sound switch follows a change there. */
export function settingsButton() {
  const label = t("settings.open");
  return h("button.icon-btn.settings-btn", { type: "button", "aria-label": label, title: label, "data-key": "settings",
    onclick: () => openSettings(() => {
      for (const b of document.querySelectorAll("button.sound")) {
        b.setAttribute("aria-pressed", String(soundOn()));
        b.setAttribute("aria-label", t(soundOn() ? "sound.on" : "sound.off"));
        b.title = t(soundOn() ? "sound.on" : "sound.off");
        replace(b, soundIcon(soundOn()));
      }
    }) },
  h("span.icon", { "aria-hidden": "true" }, "⚙"));
}

function soundIcon(on) {
  const span = document.createElement("span");
  span.setAttribute("aria-hidden", "true");
  span.className = "icon";
  span.innerHTML = `<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor"/>${on ? '<path d="M16 9a4 4 0 0 1 0 6"/><path d="M18.5 6.5a7.5 7.5 0 0 1 0 11"/>' : '<path d="M16 9l5 6M21 9l-5 6"/>'}</svg>`;
  return span;
}

export function brand(small = false) {
  return h("a.brand", { href: "/", class: small ? "small" : "", "aria-label": t("app.name"),
    onclick: (e) => {
      if (S.sock) {
        e.preventDefault();
        leaveToLanding();
      }
    } },
  h("span.brand-cards", { "aria-hidden": "true" }, h("span.bc.bc1"), h("span.bc.bc2"), h("span.bc.bc3")),
  h("span.brand-name", t("app.name")));
}

export function shellParts() {
  return [
    h("div#toasts.toasts", { "aria-live": "polite" }),
    h("div#sr-announce.sr-only", { "aria-live": "assertive", "aria-atomic": "true" }),
  ];
}
