// Optional sounds synthesised with WebAudio (off by default; no audio files).
const KEY = "mercyless.sound";
let ctx = null;
let enabled = localStorage.getItem(KEY) === "on";

export function soundOn() {
  return enabled;
}

export function setSound(on) {
  enabled = on;
  localStorage.setItem(KEY, on ? "on" : "off");
  if (on) ensure();
}

// A page reloaded with sound on may not start audio before the player touches it: the first
// touch or key wakes it, so the next turn is heard.
for (const type of ["pointerdown", "keydown"]) {
  window.addEventListener(type, () => {
    if (enabled) ensure();
  }, { capture: true, passive: true });
}

function ensure() {
  if (!ctx) {
    const AC = window.AudioContext || window.webkitAudioContext;
    if (!AC) return null;
    ctx = new AC();
  }
  if (ctx.state === "suspended") ctx.resume();
  return ctx;
}

function tone(freq, start, dur, { type = "sine", gain = 0.08, slide = 0 } = {}) {
  const c = ensure();
  if (!c) return;
  const t0 = c.currentTime + start;
  const osc = c.createOscillator();
  const g = c.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, t0);
  if (slide) osc.frequency.exponentialRampToValueAtTime(Math.max(40, freq + slide), t0 + dur);
  g.gain.setValueAtTime(0.0001, t0);
  g.gain.exponentialRampToValueAtTime(gain, t0 + 0.01);
  g.gain.exponentialRampToValueAtTime(0.0001, t0 + dur);
  osc.connect(g).connect(c.destination);
  osc.start(t0);
  osc.stop(t0 + dur + 0.02);
}

const SOUNDS = {
  play: () => tone(520, 0, 0.09, { type: "triangle", slide: 240 }),
  draw: () => tone(300, 0, 0.08, { type: "triangle", slide: -80, gain: 0.05 }),
  turn: () => {
    tone(660, 0, 0.12);
    tone(880, 0.12, 0.16);
  },
  uno: () => {
    tone(523, 0, 0.18, { type: "square", gain: 0.04 });
    tone(659, 0.06, 0.18, { type: "square", gain: 0.04 });
    tone(784, 0.12, 0.24, { type: "square", gain: 0.04 });
  },
  stack: () => tone(180, 0, 0.25, { type: "sawtooth", gain: 0.05, slide: -60 }),
  eliminated: () => {
    tone(392, 0, 0.2, { type: "sawtooth", gain: 0.05 });
    tone(262, 0.18, 0.35, { type: "sawtooth", gain: 0.05, slide: -100 });
  },
  win: () => [523, 659, 784, 1047].forEach((f, i) => tone(f, i * 0.11, 0.22, { type: "triangle" })),
  error: () => tone(140, 0, 0.15, { type: "square", gain: 0.03 }),
};

export function sound(name) {
  if (!enabled) return;
  try {
    SOUNDS[name]?.();
  } catch {
    /* audio is a nicety */
  }
}
