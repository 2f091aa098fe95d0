// Seats around an oval table, shared by the table and the big screen: where each seat sits (in
// per cent of the ring's box) and the direction of play drawn as arrows along the oval.
//
// Screen coordinates run y down, so a growing angle goes clockwise as seen from above the table.
// The viewer sits at the bottom (90°); seats follow in seat order clockwise from there, as at a
// real table: the next seat in play (direction 1) sits to the viewer's left.
import { svg } from "./dom.js";

const DEG = Math.PI / 180;

/**
 * Angles (degrees) of `n` seats. `withViewer`: the viewer holds the bottom and the others share
 * the rest of the oval (seat k of the viewer's followers at 90 + 360·k/(n+1)); without one (the
 * big screen), every seat gets an equal share starting just left of the bottom.
 */
export function seatAngles(n, { withViewer = false } = {}) {
  const out = [];
  if (withViewer) {
    for (let k = 1; k <= n; k++) out.push(90 + (360 * k) / (n + 1));
  } else {
    for (let k = 0; k < n; k++) out.push(90 + (360 * (k + 0.5)) / n);
  }
  return out;
}

/** {x, y} in per cent of the ring's box for an angle on an oval of radii rx, ry (per cent). */
export function onOval(angle, rx = 42, ry = 40) {
  return { x: 50 + rx * Math.cos(angle * DEG), y: 50 + ry * Math.sin(angle * DEG) };
}

/** Puts `el` at `angle` on the oval (custom properties read by the stylesheet). */
export function place(el, angle, rx, ry) {
  const { x, y } = onOval(angle, rx, ry);
  el.style.setProperty("--x", `${x.toFixed(2)}%`);
  el.style.setProperty("--y", `${y.toFixed(2)}%`);
  el.dataset.side = y > 62 ? "bottom" : y < 38 ? "top" : x < 50 ? "left" : "right";
}

/**
 * Shifts the seats that stick out of `box` (a narrow phone, a long name) back inside it: all
 * writes, then all reads, then all writes, so one layout is forced however many seats there are.
 */
export function keepInside(box, els, pad = 4) {
  for (const el of els) {
    el.style.removeProperty("--dx");
    el.style.removeProperty("--dy");
  }
  const b = box.getBoundingClientRect();
  const rects = els.map((el) => el.getBoundingClientRect());
  els.forEach((el, i) => {
    const r = rects[i];
    const dx = Math.max(0, b.left + pad - r.left) - Math.max(0, r.right - (b.right - pad));
    const dy = Math.max(0, b.top + pad - r.top) - Math.max(0, r.bottom - (b.bottom - pad));
    if (dx) el.style.setProperty("--dx", `${Math.round(dx)}px`);
    if (dy) el.style.setProperty("--dy", `${Math.round(dy)}px`);
  });
}

// the oval the direction of play runs along, in its box's viewBox (200 x 100, stretched to the box)
const OVAL_RX = 92;
const OVAL_RY = 44;
/** Where the arrowheads sit on the oval when nothing hides them (degrees, clockwise from the right). */
export const HEAD_ANGLES = [45, 135, 225, 315];

function headPoint(a) {
  return { x: 100 + OVAL_RX * Math.cos(a * DEG), y: 50 + OVAL_RY * Math.sin(a * DEG) };
}

/**
 * The angles at which arrowheads show clear of `rects` (seats, piles: client rects, as is `box`,
 * the arrows' box): every 15° is tried, the usual four first and then those nearest them, and one
 * is kept if no rect hides it and it is at least 60° from those kept; up to four. A head half
 * behind a seat read as a glitch, not as the direction of play.
 */
export function clearHeadAngles(box, rects) {
  const sx = box.width / 200;
  const sy = box.height / 100;
  // half a head (its path reaches 4.5 units from its point, stretched as the box stretches it)
  const reachX = 4.5 * sx + 3;
  const reachY = 4.5 * sy + 3;
  const gap = (a, b) => Math.min(Math.abs(a - b), 360 - Math.abs(a - b));
  const tries = [];
  for (let a = 0; a < 360; a += 15) tries.push(a);
  tries.sort((a, b) => Math.min(...HEAD_ANGLES.map((u) => gap(a, u))) - Math.min(...HEAD_ANGLES.map((u) => gap(b, u))) || a - b);
  const kept = [];
  for (const a of tries) {
    if (kept.length === 4) break;
    if (kept.some((k) => gap(a, k) < 60)) continue;
    const p = headPoint(a);
    const x = box.left + (p.x / 200) * box.width;
    const y = box.top + (p.y / 100) * box.height;
    const hidden = rects.some((r) => r.width > 0 && x > r.left - reachX && x < r.right + reachX
      && y > r.top - reachY && y < r.bottom + reachY);
    if (!hidden) kept.push(a);
  }
  return kept.sort((a, b) => a - b);
}

/**
 * The direction of play: the oval with arrowheads along it (at `angles`), pointing clockwise (1)
 * or counter-clockwise (-1). The arrows are one group, so a reverse turns them round at once.
 */
export function directionArrows(direction, angles = HEAD_ANGLES) {
  const rx = OVAL_RX;
  const ry = OVAL_RY;
  const heads = [];
  for (const a of angles) {
    const { x, y } = headPoint(a);
    // the tangent of a growing angle: clockwise on screen
    let turn = Math.atan2(ry * Math.cos(a * DEG), -rx * Math.sin(a * DEG)) / DEG;
    if (direction < 0) turn += 180;
    heads.push(`<path d="M-3.5,-4.5 L3.5,0 L-3.5,4.5" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round" vector-effect="non-scaling-stroke" transform="translate(${x.toFixed(1)} ${y.toFixed(1)}) rotate(${turn.toFixed(1)})"/>`);
  }
  const markup = `<svg viewBox="0 0 200 100" preserveAspectRatio="none">`
    + `<ellipse cx="100" cy="50" rx="${rx}" ry="${ry}" fill="none" stroke="currentColor" stroke-width="1.2" stroke-dasharray="3 5" vector-effect="non-scaling-stroke"/>`
    + `<g class="ring-heads">${heads.join("")}</g></svg>`;
  const el = svg(markup, `ring-arrows${direction < 0 ? " ccw" : " cw"}`);
  el.dataset.direction = String(direction);
  return el;
}
