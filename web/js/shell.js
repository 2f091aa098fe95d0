// What every screen has around its content: the brand (a link home), the language picker, the sound
// switch, the toasts and the screen-reader announcements.
import { S } from "./core.js";
import { h, replace } from "./dom.js";
import { LANG_NAMES, LANGS, lang, setLang, t } from "./i18n.js";
import { go } from "./router.js";
import { setSound, sound, soundOn } from "./sound.js";
import { openSettings } from "./theme.js";

export const app = document.getElementById("app");

// On a phone the closed picker shows the language's code ("NL": "Nederlands" was cut), its options
// the whole names: the select lies transparent over the code, as a rule's choice in the lobby does.
export function langSelect() {
  const select = h("select.lang", { "aria-label": t("lang.label"), title: t("lang.label"),
    onchange: (e) => {
      setLang(e.target.value, true);
      go("rebuild");
    } },
  Object.keys(LANGS).map((l) => h("option", { value: l, selected: l === lang() }, LANG_NAMES[l])));
  return h("span.lang-pick", select, h("span.lang-face", { "aria-hidden": "true" }, lang().toUpperCase()));
}

/**
 * The sound switch, remembered per browser (sound.js): the top bar's speaker icon, or with
 * `labelled` a switch that says what it is, for the first screen (a phone's player looks for
 * words there, not a small icon). Every switch on the page follows a change made at any of them.
 */
export function soundToggle({ labelled = false } = {}) {
  const flip = () => {
    setSound(!soundOn());
    syncSoundSwitches();
    if (soundOn()) sound("turn"); // what the turn sounds like, and that the sound works
  };
  if (labelled) {
    const el = h("button.sound-switch", { type: "button", role: "switch", onclick: flip },
      h("span.sound-switch-icon"), h("span.sound-switch-label", t("sound.switch")),
      h("span.sound-switch-state", { "aria-hidden": "true" }), h("span.switch-track", { "aria-hidden": "true" }, h("span.switch-knob")));
    showSound(el);
    return el;
  }
  const el = h("button.icon-btn.sound", { type: "button", onclick: flip });
  showSound(el);
  return el;
}

function showSound(el) {
  const on = soundOn();
  if (el.classList.contains("sound-switch")) {
    el.setAttribute("aria-checked", String(on));
    el.querySelector(".sound-switch-state").textContent = t(on ? "sound.state.on" : "sound.state.off");
    replace(el.querySelector(".sound-switch-icon"), soundIcon(on));
    return;
  }
  el.setAttribute("aria-pressed", String(on));
  el.setAttribute("aria-label", t(on ? "sound.on" : "sound.off"));
  el.title = t(on ? "sound.on" : "sound.off");
  replace(el, soundIcon(on));
}

/** Every sound switch on the page shows the sound as it is now. */
function syncSoundSwitches() {
  for (const el of document.querySelectorAll("button.sound, button.sound-switch")) showSound(el);
}

/** ⚙: the settings (the card theme, the sound); the bar's sound switch follows a change there. */
export function settingsButton() {
  const label = t("settings.open");
  return h("button.icon-btn.settings-btn", { type: "button", "aria-label": label, title: label, "data-key": "settings",
    onclick: () => openSettings(syncSoundSwitches) },
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
        go("leave");
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
