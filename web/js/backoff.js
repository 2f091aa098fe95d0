// How long a lost socket waits before it tries again (web/js/net.js). A restart, a deploy or a
// network's return drops every phone of a server at once, and they must not all come back in the
// same instant: the wait is drawn over most of an exponential ceiling ("full jitter"). A server
// that says how long (close 1012, restarting, or 1013, busy, with {"retry_ms": N}:
// app/transport/admission.py) gets its phones back spread over those N ms; a restart that says
// nothing, over at least 3 s.
export const RETRY_MAX_MS = 10000;
const HINT_MAX_MS = 60000;

/** The `retry_ms` a restarting or busy server's close carries, else 0. */
export function serverHint(close) {
  if (!close || (close.code !== 1012 && close.code !== 1013) || !close.reason) return 0;
  try {
    const n = JSON.parse(close.reason).retry_ms;
    return Number.isFinite(n) && n > 0 ? Math.min(n, HINT_MAX_MS) : 0;
  } catch {
    return 0;
  }
}

/** The wait (ms) before reconnect `attempt` (1, 2, ...) after `close` ({code, reason}). */
export function retryDelay(attempt, close, random = Math.random) {
  let ceiling = Math.min(RETRY_MAX_MS, 400 * 2 ** Math.min(attempt - 1, 5));
  const hint = serverHint(close);
  if (hint) return Math.round(hint * (0.1 + 0.9 * random()));
  if (close && close.code === 1012) ceiling = Math.max(ceiling, 3000);
  return Math.round(ceiling * (0.25 + 0.75 * random()));
}
