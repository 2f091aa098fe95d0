// Tokens, one per room, kept across reloads in localStorage (net.js re-exports `Seats`).

const SEATS_KEY = "mercyless.rooms";
const SEAT_TTL_MS = 6 * 3600 * 1000;

export const Seats = {
  all() {
    try {
      const raw = JSON.parse(localStorage.getItem(SEATS_KEY) || "{}");
      const now = Date.now();
      return Object.fromEntries(Object.entries(raw).filter(([, s]) => s && s.token && now - (s.at || 0) < SEAT_TTL_MS));
    } catch {
      return {};
    }
  },
  get(code) {
    return this.all()[code] || null;
  },
  put(code, seat) {
    const all = this.all();
    all[code] = { ...seat, at: Date.now() };
    localStorage.setItem(SEATS_KEY, JSON.stringify(all));
  },
  /** The room was in use now: its seat is kept 6 hours from its last use. At most once a minute
   * (called on every patch, the store's read and write were a slow phone's work each time). */
  touch(code) {
    const now = Date.now();
    if (now - (this.touched.get(code) || 0) < 60_000) return;
    this.touched.set(code, now);
    const s = this.get(code);
    if (s) this.put(code, s);
  },
  touched: new Map(),
  drop(code) {
    const all = this.all();
    delete all[code];
    localStorage.setItem(SEATS_KEY, JSON.stringify(all));
  },
};
