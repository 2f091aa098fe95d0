// The invite link friends open: the page's own origin, unless that is this computer's loopback
// address (localhost, 127.x, [::1]), which no other device can open: then the first base URL the
// server reports (GET /api/invite, for the room's members: asked with the room's code and token).
// With none (the server listens on loopback only) the loopback link is all there is, shown with a
// warning.

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
