// The service worker: the client's shell (every file of web/) kept in one cache per version, so the
// app opens at once and with no internet on a LAN, and changes only as a whole. The server writes
// the version (a hash of the files) and the list in when it serves this file
// (app/api/app_shell.py); it is asked for again on every visit. The game's traffic (/api/, /ws/)
// never passes through a cache. Turn notifications are shown from here (Android needs a worker's)
// and a tap on one brings the game's tab forward.
const VERSION = "__SHELL_VERSION__";
const SHELL = [/*__SHELL_FILES__*/];
const CACHE = `mercyless-shell-${VERSION}`;
const PREFIX = "mercyless-shell-";

self.addEventListener("install", (event) => {
  event.waitUntil(precache());
});

async function precache() {
  if (VERSION.startsWith("__")) throw new Error("sw.js served without its version");
  try {
    const cache = await caches.open(CACHE);
    // past the HTTP cache, and only files of this very version: behind a balancer in the middle
    // of an upgrade an older process may answer, and a mixed set must never be kept
    const answers = await Promise.all(SHELL.map(async (url) => {
      const res = await fetch(new Request(url, { cache: "reload", credentials: "same-origin" }));
      if (!res.ok || res.headers.get("x-shell-version") !== VERSION) throw new Error(`${url}: not version ${VERSION}`);
      return [url, res];
    }));
    await Promise.all(answers.map(([url, res]) => cache.put(url, res)));
  } catch (err) {
    await caches.delete(CACHE); // all or nothing: the shell in use stays until a whole set is in
    throw err;
  }
  // the first shell takes over at once; a new version waits for its page to say (pwa.js: a page
  // that has finished loading, so none of its files comes from the next version)
  if (!self.registration.active) await self.skipWaiting();
}

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
    await self.clients.claim();
  })());
});

self.addEventListener("message", (event) => {
  if (event.data?.type === "activate") self.skipWaiting();
});

/** The pages the server answers with index.html. */
function isAppPage(path) {
  return path === "/" || path === "/index.html" || path.startsWith("/r/") || path.startsWith("/tv/");
}

self.addEventListener("fetch", (event) => {
  const req = event.request;
  if (req.method !== "GET") return;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/api/") || url.pathname.startsWith("/ws/")) return; // never cached
  const page = req.mode === "navigate" && isAppPage(url.pathname);
  const key = page ? "/index.html" : url.pathname;
  if ((url.search && !page) || !SHELL.includes(key)) return;
  event.respondWith(fromShell(key, req));
});

async function fromShell(key, req) {
  const hit = await (await caches.open(CACHE)).match(key);
  return hit || fetch(req);
}

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = event.notification.data?.url || "/";
  event.waitUntil((async () => {
    const tabs = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const tab = tabs.find((c) => c.url === url) || tabs.find((c) => new URL(c.url).origin === self.location.origin);
    if (tab) return tab.focus();
    return self.clients.openWindow(url);
  })());
});
