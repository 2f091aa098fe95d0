// "Your turn in room ABCDEF" as a system notification, when the turn comes while the page is hidden
// (the player is in another app) and they allowed it in the settings. Permission is asked only from
// that switch (a tap); pages that are not a secure context (plain http on 192.168.x.x) cannot have
// notifications and show no switch. Shown by the service worker where there is one (Android allows
// nothing else), else by the page; a tap on it brings the game's tab forward.
import { t } from "./i18n.js";

const KEY = "mercyless.notify"; // "on" once the player turned it on (and the browser allowed)
const shown = new Set(); // the page's own notifications, closed on return

export function canNotify() {
  return window.isSecureContext && "Notification" in window;
}

export function notifyOn() {
  return canNotify() && localStorage.getItem(KEY) === "on" && Notification.permission === "granted";
}

/** The settings' switch: asks the browser (this runs in the tap's handler); true when allowed. */
export async function setNotify(on) {
  if (!on || !canNotify()) {
    localStorage.removeItem(KEY);
    return false;
  }
  let answer = Notification.permission;
  try {
    if (answer !== "granted") answer = await Notification.requestPermission();
  } catch {
    answer = "denied";
  }
  if (answer === "granted") localStorage.setItem(KEY, "on");
  else localStorage.removeItem(KEY);
  return answer === "granted";
}

/** Whether the browser refuses this site notifications (the player must allow them in its settings). */
export function notifyBlocked() {
  return canNotify() && Notification.permission === "denied";
}

function tagFor(code) {
  return `mercyless-turn-${code}`;
}

/** The turn came (view.js): a notification if the page is out of sight and the player wants one. */
export function notifyTurn(code) {
  if (!notifyOn() || document.visibilityState !== "hidden") return;
  const title = t("notify.turn", { code });
  const options = { body: t("notify.turn.body"), tag: tagFor(code), renotify: true, icon: "/icons/icon-192.png",
    data: { url: location.href } };
  const sw = navigator.serviceWorker;
  if (sw?.controller) {
    sw.ready.then((reg) => reg.showNotification(title, options)).catch(() => fromPage(title, options));
  } else fromPage(title, options);
}

function fromPage(title, options) {
  try {
    const n = new Notification(title, options);
    n.onclick = () => {
      window.focus();
      n.close();
    };
    n.onclose = () => shown.delete(n);
    shown.add(n);
  } catch {
    /* a browser that allows only a worker's notifications, and this page has none */
  }
}

/** Back on the page: its turn notifications are old news. */
function closeTurnNotices() {
  for (const n of shown) n.close();
  shown.clear();
  navigator.serviceWorker?.getRegistration?.().then((reg) => reg?.getNotifications())
    .then((list) => (list || []).filter((n) => n.tag.startsWith("mercyless-turn-")).forEach((n) => n.close()))
    .catch(() => {});
}

export function setupNotify() {
  if (!canNotify()) return;
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") closeTurnNotices();
  });
}
