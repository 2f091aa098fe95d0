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

/**
 * The direction of play: the oval with four arrowheads along it, pointing clockwise (1) or
 * counter-clockwise (-1). The arrows are one group, so a reverse turns them round at once.
 */
export function directionArrows(direction) {
  const rx = 92;
  const ry = 44;
  const heads = [];
  for (const a of [45, 135, 225, 315]) {
    const x = 100 + rx * Math.cos(a * DEG);
    const y = 50 + ry * Math.sin(a * DEG);
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
