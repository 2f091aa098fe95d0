// The invite friends open: its link, copied or shared, and a QR code of it in the lobby.
//
// The link is the page's own origin, unless that is this computer's loopback address (localhost,
// 127.x, [::1]), which no other device can open: then the first base URL the server reports (GET
// /api/invite, for the room's members: asked with the room's code and token). With none (the
// server listens on loopback only) the loopback link is all there is, shown to the host with a
// warning (a guest can do nothing about it).
import { S, media, toast } from "./core.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { Seats } from "./net.js";

const cache = new Map(); // origin -> Promise<{base, localOnly}>
let known = null; // the last answer, so a redraw shows the link at once

export function isLoopback(hostname) {
  const host = String(hostname || "").toLowerCase().replace(/^\[|\]$/g, "");
  return host === "localhost" || host.endsWith(".localhost") || /^127(\.\d{1,3}){3}$/.test(host) || host === "::1";
}

/** The invite's base URL, from the page's location and the server's /api/invite answer. */
export function pickBase(origin, hostname, answer) {
  if (!isLoopback(hostname)) return { base: origin, localOnly: false };
  const first = (answer?.urls || []).find((u) => typeof u === "string" && /^https?:\/\//.test(u));
  if (first) return { base: first.replace(/\/+$/, ""), localOnly: false };
  return { base: origin, localOnly: true };
}

/** Resolves to {base, localOnly}; asks the server only when the page is opened on loopback, as a
 * member of the room `code` (its `token`). */
export function inviteBase(code, token) {
  const { origin, hostname } = location;
  if (!isLoopback(hostname)) {
    known = pickBase(origin, hostname, null);
    return Promise.resolve(known);
  }
  if (!cache.has(origin)) {
    const headers = { accept: "application/json" };
    if (token) headers.authorization = `Bearer ${token}`; // a header, never the URL (protocol.md)
    cache.set(origin, fetch(`/api/invite?code=${encodeURIComponent(code || "")}`, { headers })
      .then((res) => (res.ok ? res.json() : null))
      .catch(() => null)
      .then((answer) => {
        if (!answer) cache.delete(origin); // ask again next time
        known = pickBase(origin, hostname, answer);
        return known;
      }));
  }
  return cache.get(origin);
}

/** What inviteBase last resolved to (for this page's origin); else null. */
export function knownBase() {
  return known;
}

export function qrSrc(url) {
  return `/api/qr.svg?text=${encodeURIComponent(url)}`;
}

/** The invite link as far as known now (not a loopback address when another is known). */
export function inviteUrl() {
  return `${knownBase()?.base || location.origin}/r/${S.code}`;
}

/** The invite's addresses are for the room's members: asked with this browser's token for it. */
export function askInviteBase() {
  const token = S.sock && S.sock.code === S.code ? S.sock.token : Seats.get(S.code)?.token;
  return inviteBase(S.code, token);
}

export async function copyInvite() {
  await askInviteBase();
  const url = inviteUrl();
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(url);
      toast(t("lobby.copied"), "good");
      return;
    }
  } catch {
    /* fall through to the fallback */
  }
  // fallback: a selected textarea and execCommand, else show the link to copy by hand
  const area = h("textarea", { readonly: true, style: { position: "fixed", top: "-1000px", opacity: "0" } });
  area.value = url;
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  if (ok) toast(t("lobby.copied"), "good");
  else {
    toast(t("lobby.copyFailed", { url }), "info", 9000);
    const link = document.querySelector(".invite-link");
    if (link) {
      const range = document.createRange();
      range.selectNodeContents(link);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
    }
  }
}

// A guest's phone: the QR code (for friends still to come) folds away under a line to open it,
// where it filled the first screen above the seats; the host's phone, a desktop and the big
// screen show it whole.
const FOLDED = "(max-width: 600px), (pointer: coarse)";
media(FOLDED).addEventListener("change", (e) => {
  for (const fold of document.querySelectorAll(".qr-fold")) fold.open = !e.matches;
});

/** The lobby's QR code of the link and, for the host, the warning that only this computer can
 * open it: {qr, warn, show(base)}. `qr` is placed once the link is known. */
export function inviteQr(host) {
  const figure = h("figure.invite-qr",
    h("img.qr", { alt: t("lobby.qrAlt"), width: 164, height: 164, decoding: "async", onerror: (e) => inlineQr(e.target) }),
    h("figcaption.hint", t("lobby.qrHint")));
  const qr = host ? figure : h("details.qr-fold", { open: !media(FOLDED).matches }, h("summary", t("lobby.qrShow")), figure);
  qr.hidden = true;
  const warn = h("p.note.warn.invite-local", { role: "note", hidden: true }, t("lobby.localOnly"));
  const show = (b) => {
    const img = figure.querySelector("img");
    const src = qrSrc(`${b.base}/r/${S.code}`);
    if (img.getAttribute("src") !== src) {
      figure.querySelector(".qr-inline")?.remove();
      img.hidden = false;
      img.setAttribute("src", src);
    }
    qr.hidden = false;
    warn.hidden = !b.localOnly || !host;
  };
  return { qr, warn, show };
}

// The server's SVG lacks its xmlns (segno's svg_inline), which an <img> refuses to draw: the same
// drawing then goes into the page itself, where the HTML parser gives it its namespace.
async function inlineQr(img) {
  const src = img.getAttribute("src");
  if (!src || img.dataset.inlined === src) return;
  img.dataset.inlined = src;
  try {
    const res = await fetch(src);
    if (!res.ok || img.getAttribute("src") !== src) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    const drawing = doc.querySelector("svg");
    if (!drawing) return;
    for (const el of drawing.querySelectorAll("script, foreignObject")) el.remove();
    drawing.setAttribute("viewBox", `0 0 ${drawing.getAttribute("width") || 100} ${drawing.getAttribute("height") || 100}`);
    drawing.removeAttribute("width");
    drawing.removeAttribute("height");
    drawing.setAttribute("role", "img");
    drawing.setAttribute("aria-label", img.alt);
    drawing.classList.add("qr", "qr-inline");
    img.hidden = true;
    img.parentElement.querySelector(".qr-inline")?.remove();
    img.after(document.importNode(drawing, true));
  } catch {
    /* the link above is still there to copy */
  }
}
