// HTTP calls and the room's WebSocket (protocol.md): hello with the token, welcome/patch with
// version checks (a gap asks for `sync`), ack/error answers matched by message id, reconnect
// after a jittered backoff (backoff.js), a heartbeat that notices dead sockets, and resending of unanswered
// messages after a reconnect (safe: the server answers a repeated id without acting twice). A page
// coming back (shown again, unfrozen, back from the cache, online again) checks its socket at once.
import { retryDelay } from "./backoff.js";
import { applyPatch } from "./patch.js";

export const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const CODE_RE = new RegExp(`^[${CODE_ALPHABET}]{6}$`);

/** The canonical code (as the server's normalize_code does), or null. */
export function normalizeCode(raw) {
  if (typeof raw !== "string" || raw.length > 32) return null;
  const code = raw.trim().toUpperCase();
  return CODE_RE.test(code) ? code : null;
}

/** Names as the server accepts them: whitespace collapsed, 1-24 printable characters. */
export function cleanName(raw) {
  const name = String(raw ?? "").split(/\s+/).filter(Boolean).join(" ");
  if (name.length < 1 || [...name].length > 24) return null;
  if (/[\p{C}\u2028\u2029]/u.test(name)) return null;
  // at least one character that draws something (as the server judges: app/core/codes.py); the
  // Hangul fillers and the Braille blank are letters and symbols that draw nothing
  if (!/[\p{L}\p{N}\p{P}\p{S}]/u.test(name.replace(/[\u115f\u1160\u3164\uffa0\u2800]/gu, ""))) return null;
  return name;
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body, token) {
  const headers = body ? { "content-type": "application/json" } : {};
  if (token) headers.authorization = `Bearer ${token}`; // a header, never the URL (protocol.md)
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch {
    throw new ApiError(0, "network", "network error");
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const err = data && data.error ? data.error : { code: "http_error", message: res.statusText };
    throw new ApiError(res.status, err.code, err.message);
  }
  return data;
}

export const Api = {
  create: (name, rules) => api("POST", "/api/rooms", rules ? { name, rules } : { name }),
  join: (code, name, { watch = false } = {}) => api("POST", `/api/rooms/${encodeURIComponent(code)}/join`, watch ? { name, watch } : { name }),
  room: (code) => api("GET", `/api/rooms/${encodeURIComponent(code)}`),
  rules: () => api("GET", "/api/rules"),
  // the night's record needs the room's token (docs/server.md "Protocol additions")
  history: (code, token) => api("GET", `/api/rooms/${encodeURIComponent(code)}/history`, null, token),
  replay: (id, token) => api("GET", `/api/rounds/${encodeURIComponent(id)}/replay`, null, token),
  story: (code, token) => api("GET", `/api/rooms/${encodeURIComponent(code)}/story`, null, token),
  verifyRound: (id, token) => api("GET", `/api/rounds/${encodeURIComponent(id)}/verify`, null, token),
  // a finished round's deal, shared with another room (js/deals.js)
  deal: (id) => api("GET", `/api/deals/${encodeURIComponent(id)}`),
  useDeal: (code, deal, token) => api("POST", `/api/rooms/${encodeURIComponent(code)}/deal`, { deal }, token),
};

// the tokens' store lives in seats.js; imported from here as it always was
export { Seats } from "./seats.js";

// -- the room socket ----------------------------------------------------------------------------

const FATAL = { 4401: "removed", 4404: "gone", 4409: "replaced" };
const PING_EVERY_MS = 15000;
const PONG_WITHIN_MS = 8000;
const RESEND_WITHIN_MS = 15000;
// A page back from the background asks the server for a pong: a socket a phone's sleep or a
// network change left dead looks open, and the heartbeat would take up to PING_EVERY_MS +
// PONG_WITHIN_MS to find out. Shorter than PONG_WITHIN_MS: a wrong guess costs one reconnect.
const RESUME_PROBE_MS = 2000;

let counter = 0;
const session = Math.random().toString(36).slice(2, 8);
function newId() {
  counter += 1;
  return `${session}${Date.now().toString(36)}-${counter}`;
}

/**
 * handlers: onState(view, {version, events, now, welcome}), onStatus(status, info),
 * onFatal(reason), onGap().
 */
export class RoomSocket {
  constructor(code, token, handlers) {
    this.code = code;
    this.token = token;
    this.h = handlers;
    this.ws = null;
    this.view = null;
    this.version = 0;
    this.you = null;
    this.attempt = 0;
    this.waiting = new Map(); // id -> {msg, resolve, sent}
    this.closedByUs = false;
    this.status = "connecting";
    this.syncing = false;
    this.retryTimer = null;
    this.pingTimer = null;
    this.pongTimer = null;
    this.probeTimer = null;
    this.probing = false;
    this.onBack = () => this.checkNow();
    this.onVisible = () => {
      if (document.visibilityState === "visible") this.checkNow();
    };
    this.onPageShow = (e) => {
      if (e.persisted) this.checkNow();
    };
    window.addEventListener("online", this.onBack);
    window.addEventListener("pageshow", this.onPageShow);
    document.addEventListener("visibilitychange", this.onVisible);
    document.addEventListener("resume", this.onBack); // unfrozen (Page Lifecycle API)
  }

  connect() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${proto}//${location.host}/ws/${this.code}`);
    this.ws = ws;
    this.setStatus(this.attempt ? "reconnecting" : "connecting");
    ws.onopen = () => ws.send(JSON.stringify({ type: "hello", token: this.token }));
    ws.onmessage = (e) => {
      if (ws !== this.ws) return;
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      this.receive(msg);
    };
    ws.onclose = (e) => {
      if (ws !== this.ws) return;
      this.stopHeartbeat();
      this.ws = null;
      if (this.closedByUs) return;
      const fatal = FATAL[e.code];
      if (fatal) {
        this.setStatus("closed");
        this.h.onFatal(fatal);
        return;
      }
      // closed while the page slept, the close told only now that it is back: no backoff
      if (this.probing) this.reconnectNow();
      else this.scheduleRetry({ code: e.code, reason: e.reason });
    };
    ws.onerror = () => {
      /* onclose follows */
    };
  }

  setStatus(status, info = {}) {
    this.status = status;
    this.h.onStatus(status, info);
  }

  scheduleRetry(close) {
    this.attempt += 1;
    const delay = retryDelay(this.attempt, close);
    this.retryAt = Date.now() + delay;
    this.setStatus("reconnecting", { at: this.retryAt });
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  retryNow() {
    if (this.closedByUs || this.ws || !this.retryTimer) return;
    this.connect();
  }

  /** The page is back: a socket that is gone is opened again now, not after its backoff; an open
   * one must answer a ping within RESUME_PROBE_MS (whatever the server sent meanwhile comes first). */
  checkNow() {
    if (this.closedByUs) return;
    const ws = this.ws;
    if (!ws) {
      if (this.retryTimer) this.reconnectNow();
      return;
    }
    if (ws.readyState === WebSocket.CONNECTING) return; // its handshake answers for itself
    if (ws.readyState !== WebSocket.OPEN) {
      this.reconnectNow();
      return;
    }
    this.probing = true;
    ws.send('{"type":"ping"}');
    clearTimeout(this.probeTimer);
    this.probeTimer = setTimeout(() => {
      if (this.probing && this.ws === ws) this.dropDead(true);
    }, RESUME_PROBE_MS);
  }

  endProbe() {
    this.probing = false;
    clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  /** A new socket at once (the old one, if any, let go). */
  reconnectNow() {
    this.endProbe();
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.letGo();
    if (this.closedByUs) return;
    this.attempt += 1;
    this.connect();
  }

  receive(msg) {
    this.lastHeard = Date.now();
    this.endProbe();
    clearTimeout(this.pongTimer);
    this.pongTimer = null;
    switch (msg.type) {
      case "welcome": {
        this.you = msg.you;
        this.version = msg.version;
        this.view = msg.state;
        this.syncing = false;
        const wasReconnect = this.attempt > 0 || this.status !== "open";
        this.attempt = 0;
        this.setStatus("open");
        this.startHeartbeat();
        this.h.onState(this.view, { version: msg.version, now: msg.now, events: [], welcome: true, wasReconnect, log: msg.log || [] });
        this.resend();
        break;
      }
      case "patch": {
        if (this.view === null || this.syncing) return;
        if (msg.version <= this.version) return; // already have it
        if (msg.version !== this.version + 1) {
          this.requestSync();
          return;
        }
        let next;
        try {
          next = applyPatch(this.view, msg.ops || []);
        } catch (err) {
          console.warn("patch failed, syncing", err);
          this.requestSync();
          return;
        }
        this.view = next;
        this.version = msg.version;
        this.h.onState(next, { version: msg.version, now: msg.now, events: msg.events || [], welcome: false });
        break;
      }
      case "ack":
      case "error": {
        const w = msg.id != null ? this.waiting.get(msg.id) : null;
        if (w) {
          this.waiting.delete(msg.id);
          w.resolve(msg);
        } else if (msg.type === "error" && msg.id == null) {
          console.warn("server error", msg);
        }
        break;
      }
      default:
        break; // pong and future types
    }
  }

  requestSync() {
    if (this.syncing) return;
    this.syncing = true;
    this.send("sync").then((a) => {
      if (a.type === "error") this.syncing = false;
    });
  }

  /** Send a typed message; resolves with the server's ack or error (never rejects). */
  send(type, fields = {}) {
    const id = newId();
    const msg = { type, id, ...fields };
    return new Promise((resolve) => {
      const entry = { msg, resolve, sent: Date.now() };
      this.waiting.set(id, entry);
      this.transmit(entry);
    });
  }

  transmit(entry) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN && this.status === "open") {
      this.ws.send(JSON.stringify(entry.msg));
    }
  }

  resend() {
    const now = Date.now();
    for (const [id, entry] of this.waiting) {
      if (now - entry.sent > RESEND_WITHIN_MS) {
        this.waiting.delete(id);
        entry.resolve({ type: "error", id, code: "stale", message: "not sent", silent: true });
      } else if (entry.msg.type !== "sync") {
        this.transmit(entry);
      } else {
        this.waiting.delete(id);
        entry.resolve({ type: "ack", id });
      }
    }
  }

  startHeartbeat() {
    this.stopHeartbeat();
    this.pingTimer = setInterval(() => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
      this.ws.send('{"type":"ping"}');
      clearTimeout(this.pongTimer);
      this.pongTimer = setTimeout(() => this.dropDead(), PONG_WITHIN_MS);
    }, PING_EVERY_MS);
  }

  /** Nothing heard back after a ping: the socket is dead even if the browser has not noticed.
   * `now`: the page just came back and waits for it, so no backoff. */
  dropDead(now = false) {
    if (now) {
      this.reconnectNow();
      return;
    }
    this.letGo();
    if (!this.closedByUs) this.scheduleRetry();
  }

  letGo() {
    const old = this.ws;
    this.ws = null;
    this.stopHeartbeat();
    try {
      old?.close();
    } catch {
      /* already closing */
    }
  }

  stopHeartbeat() {
    clearInterval(this.pingTimer);
    clearTimeout(this.pongTimer);
    this.pingTimer = null;
    this.pongTimer = null;
  }

  close() {
    this.closedByUs = true;
    this.stopHeartbeat();
    this.endProbe();
    clearTimeout(this.retryTimer);
    window.removeEventListener("online", this.onBack);
    window.removeEventListener("pageshow", this.onPageShow);
    document.removeEventListener("visibilitychange", this.onVisible);
    document.removeEventListener("resume", this.onBack);
    for (const [id, entry] of this.waiting) entry.resolve({ type: "error", id, code: "closed", message: "", silent: true });
    this.waiting.clear();
    if (this.ws) this.ws.close(1000);
    this.ws = null;
  }
}
