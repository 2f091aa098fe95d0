// The card theme, chosen in the settings (the top bar's ⚙) and remembered per browser: the
// standard faces, or a colour-blind-safe set where every colour also has its own shape (red a
// triangle, yellow a circle, green a square, blue a diamond) and a bolder pattern, besides the
// letters every face shows. The stylesheet reads <html data-cards>.
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { phoneSettings } from "./pwa.js";
import { setSound, soundOn } from "./sound.js";

const KEY = "mercyless.cards";
export const THEMES = ["standard", "shapes"];

export function cardTheme() {
  const saved = localStorage.getItem(KEY);
  return THEMES.includes(saved) ? saved : "standard";
}

export function setCardTheme(theme) {
  const chosen = THEMES.includes(theme) ? theme : "standard";
  localStorage.setItem(KEY, chosen);
  applyCardTheme();
}

export function applyCardTheme() {
  document.documentElement.dataset.cards = cardTheme();
}

/** The settings dialog: the card theme (with a sample of each colour) and the sound. */
export function openSettings(onSound) {
  const sample = h("span.theme-sample", { "aria-hidden": "true" },
    ["r", "y", "g", "b"].map((c) => h("span.swatch", { class: `sw-${c}` }, t(`letter.${c}`))));
  const radios = THEMES.map((theme) => h("label.theme-option",
    h("input", { type: "radio", name: "card-theme", value: theme, checked: cardTheme() === theme,
      onchange: () => setCardTheme(theme) }),
    h("span", h("b", t(`theme.${theme}`)), h("small", t(`theme.${theme}.d`)))));
  const sound = h("label.theme-option",
    h("input", { type: "checkbox", checked: soundOn(), onchange: (e) => {
      setSound(e.target.checked);
      onSound?.();
    } }),
    h("span", h("b", t("settings.sound"))));
  const dlg = h("dialog.dlg.dlg-settings", { "aria-labelledby": "settings-h" },
    h("div.dlg-body",
      h("h2#settings-h.dlg-title", t("settings.title")),
      h("fieldset.theme-set", h("legend", t("theme.label")), radios, sample),
      sound,
      phoneSettings(),
      h("div.dlg-actions", h("button.btn.primary", { type: "button", onclick: () => dlg.close() }, t("howto.close.short")))));
  dlg.addEventListener("close", () => dlg.remove());
  document.body.append(dlg);
  dlg.showModal();
  return dlg;
}
