// The client as an app on a phone: the service worker (web/sw.js: the shell cached per version,
// opened at once and with no internet), its updates, the "install" hint where the browser offers
// one, the phone's settings (screen kept on, turn notifications) and the host's line on what a
// guest's phone gets on a given link. Service workers, installing and notifications need a secure
// context (an https page, or localhost): on a plain-http LAN address (192.168.x.x) all of that is
// simply skipped.
import { S } from "./core.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { askInviteBase, isLoopback } from "./invite.js";
import { canNotify, notifyBlocked, notifyOn, setNotify, setupNotify } from "./notify.js";
import { keepAwakeOn, setKeepAwake, setupWake } from "./wake.js";

const LATER_KEY = "mercyless.installLater"; // when the player put the hint away
const LATER_MS = 14 * 24 * 3600 * 1000;
const UPDATE_CHECK_MS = 3600 * 1000; // an app left open for days still looks for a new version

let installPrompt = null; // the browser's beforeinstallprompt event, kept for the button
let hint = null;

export function setupPwa() {
  setupWake();
  setupNotify();
  window.addEventListener("beforeinstallprompt", (e) => {
    e.preventDefault(); // the app's own hint, on the landing page and in the lobby only
    installPrompt = e;
    placeHint();
  });
  window.addEventListener("appinstalled", () => {
    installPrompt = null;
    placeHint();
  });
  new MutationObserver(placeHint).observe(document.body, { attributes: true, attributeFilter: ["data-screen", "data-status"] });
  new MutationObserver(() => {
    hint?.remove();
    hint = null;
    placeHint();
  }).observe(document.documentElement, { attributes: true, attributeFilter: ["lang"] });
  if (!window.isSecureContext || !("serviceWorker" in navigator)) return;
  // after the page's own loading: the worker then fetches the shell without slowing it
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register, { once: true });
}

async function register() {
  const sw = navigator.serviceWorker;
  if (!sw) return;
  const hadShell = !!sw.controller;
  let reg;
  try {
    reg = await sw.register("/sw.js", { scope: "/", updateViaCache: "none" });
  } catch {
    return; // no worker: the page works as before, from the network
  }
  if (!reg) return; // (a browser that blocks workers answers with nothing)
  // a new version waits until a page that has finished loading lets it in: no page then holds
  // files of two versions (the new one serves the next load, every file from its own set)
  const letIn = () => {
    if (reg.waiting && sw.controller) reg.waiting.postMessage({ type: "activate" });
  };
  reg.addEventListener("updatefound", () => {
    const next = reg.installing;
    next?.addEventListener("statechange", () => {
      if (next.state === "installed") letIn();
    });
  });
  letIn();
  sw.addEventListener("controllerchange", () => {
    if (hadShell) reloadWhenAway();
  });
  let checked = Date.now();
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && Date.now() - checked > UPDATE_CHECK_MS) {
      checked = Date.now();
      reg.update().catch(() => {});
    }
  });
}

/** This page still runs the old version's code: it is loaded again when nobody is looking. */
function reloadWhenAway() {
  if (document.visibilityState === "hidden") {
    location.reload();
    return;
  }
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") location.reload();
  });
}

function standalone() {
  return window.matchMedia("(display-mode: standalone)").matches || navigator.standalone === true;
}

function putAway() {
  return Date.now() - Number(localStorage.getItem(LATER_KEY) || 0) < LATER_MS;
}

/** The landing page and the lobby show the hint while the browser offers to install. */
function placeHint() {
  const body = document.body.dataset;
  const here = body.screen === "landing" || (body.screen === "room" && body.status === "lobby");
  const show = !!installPrompt && here && !standalone() && !putAway();
  if (!show) {
    hint?.remove();
    hint = null;
    return;
  }
  if (hint) return;
  hint = h("aside.install-hint", { "aria-label": t("install.label") },
    h("img.install-icon", { src: "/icons/icon-192.png", alt: "", width: 36, height: 36 }),
    h("span.install-text", h("b", t("install.title")), h("small", t("install.hint"))),
    h("button.btn.primary.small.install-go", { type: "button", onclick: install }, t("install.button")),
    h("button.icon-btn.install-later", { type: "button", "aria-label": t("install.later"), title: t("install.later"),
      onclick: () => {
        localStorage.setItem(LATER_KEY, String(Date.now()));
        placeHint();
      } }, h("span.icon", { "aria-hidden": "true" }, "×")));
  document.body.append(hint);
}

async function install() {
  const offer = installPrompt;
  if (!offer) return;
  installPrompt = null; // a prompt can be shown once
  placeHint();
  try {
    await offer.prompt();
    await offer.userChoice;
  } catch {
    /* the browser took the offer back */
  }
}

/** The settings dialog's part (theme.js): the screen kept on, turn notifications, installing. */
export function phoneSettings() {
  const awake = h("label.theme-option",
    h("input", { type: "checkbox", checked: keepAwakeOn(), "data-key": "keep-awake", onchange: (e) => setKeepAwake(e.target.checked) }),
    h("span", h("b", t("settings.awake")), h("small", t("settings.awake.d"))));
  const parts = [awake];
  if (canNotify()) {
    const note = h("small.notify-note", { role: "status" }, notifyBlocked() ? t("settings.notify.blocked") : "");
    const box = h("input", { type: "checkbox", checked: notifyOn(), "data-key": "notify",
      onchange: async (e) => {
        const el = e.target;
        const allowed = await setNotify(el.checked);
        el.checked = allowed;
        note.textContent = notifyBlocked() ? t("settings.notify.blocked") : "";
      } });
    parts.push(h("label.theme-option", box, h("span", h("b", t("settings.notify")), h("small", t("settings.notify.d")), note)));
  }
  if (installPrompt && !standalone()) {
    parts.push(h("button.btn.small.install-go", { type: "button", onclick: install }, t("install.label")));
  }
  return parts;
}

/** For the host in the lobby: what a guest's phone gets on the invite link `url` (docs/deploy.md
 * "Phones"); "" for a loopback link, which the lobby already warns only this computer can open. */
export function linkFeaturesLine(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return "";
  }
  if (u.protocol === "https:") return t("phones.https");
  if (u.protocol !== "http:" || isLoopback(u.hostname)) return "";
  return t("phones.http");
}

/** The host's line under the lobby's invite (for lobby.js to place): what a guest's phone gets on
 * the invite link, once the link is known; null for a guest. */
export function phonesNote() {
  if (!S.view || S.view.room?.host !== S.you) return null;
  const el = h("p.note.phones-note", { role: "note", hidden: true });
  askInviteBase().then((b) => {
    const line = linkFeaturesLine(`${b.base}/r/${S.code}`);
    el.textContent = line;
    el.hidden = !line;
  }).catch(() => {});
  return el;
}
