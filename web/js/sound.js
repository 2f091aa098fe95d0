// Short sounds synthesised with WebAudio (off by default; no audio files): a card played, a draw,
// a stack aimed at you, a roulette, UNO, your turn (and a knock-out, a win, a refusal). Balanced
// by ear and by measure (tests/web/test_sound.py renders each offline): each under 400 ms, their
// loudest moments alike, your turn the one that stands out.
const KEY = "mercyless.sound";
const VOLUME = 0.11; // the output's level: the loudest moment of a sound at level 1 is about this
// at the same gain a square wave is ~1.4x as loud as a sine (its RMS), a triangle or a sawtooth
// ~0.8x: each note's gain is scaled so that every waveform sounds about as loud
const WAVE = { sine: 1, triangle: 1.2, square: 0.7, sawtooth: 1.2 };
const QUIET = 0.0001; // an exponential envelope's floor (it cannot reach zero)

let ctx = null;
let out = null;
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
    out = ctx.createGain();
    out.gain.value = VOLUME;
    out.connect(ctx.destination);
  }
  if (ctx.state === "suspended") ctx.resume();
  return ctx;
}

/** One note into `dest` from `at` (seconds), `dur` long: a 6 ms rise to `level`, then a fall. */
function note(c, dest, at, freq, dur, { type = "sine", level = 1, slide = 0 } = {}) {
  const osc = c.createOscillator();
  const g = c.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, at);
  if (slide) osc.frequency.exponentialRampToValueAtTime(Math.max(40, freq + slide), at + dur);
  g.gain.setValueAtTime(QUIET, at);
  g.gain.exponentialRampToValueAtTime(level * WAVE[type], at + 0.006);
  g.gain.exponentialRampToValueAtTime(QUIET, at + dur);
  osc.connect(g).connect(dest);
  osc.start(at);
  osc.stop(at + dur + 0.01);
}

// each: (note) => void, with note(at, freq, dur, options) relative to the sound's start
const SOUNDS = {
  // a light, rising flick
  play: (n) => n(0, 520, 0.09, { type: "triangle", slide: 260, level: 0.85 }),
  // a soft, falling one
  draw: (n) => n(0, 360, 0.12, { type: "triangle", slide: -120, level: 0.75 }),
  // a low double buzz: something is coming your way
  stack: (n) => {
    n(0, 196, 0.13, { type: "sawtooth", slide: -30, level: 0.75 });
    n(0.15, 185, 0.2, { type: "sawtooth", slide: -50, level: 0.75 });
  },
  // a wheel's clicks, rising and slowing down
  roulette: (n) => {
    let at = 0;
    [620, 700, 780, 880, 990, 1120].forEach((f, i) => {
      n(at, f, 0.045, { type: "square", level: 1.3 });
      at += 0.04 + i * 0.012;
    });
  },
  // three bright notes up
  uno: (n) => [523, 659, 784].forEach((f, i) => n(i * 0.07, f, i === 2 ? 0.2 : 0.1, { type: "triangle", level: 0.65 })),
  // the one to hear from across the room: two clear notes a fifth apart, a little louder
  turn: (n) => {
    n(0, 660, 0.15, { level: 1 });
    n(0.13, 990, 0.22, { level: 1 });
  },
  eliminated: (n) => {
    n(0, 392, 0.15, { type: "sawtooth", level: 0.65 });
    n(0.14, 262, 0.24, { type: "sawtooth", slide: -90, level: 0.65 });
  },
  win: (n) => [523, 659, 784, 1047].forEach((f, i) => n(i * 0.06, f, i === 3 ? 0.2 : 0.1, { type: "triangle", level: 0.65 })),
  error: (n) => n(0, 150, 0.14, { type: "square", level: 0.6 }),
};

export const SOUND_NAMES = Object.keys(SOUNDS);

/** Schedule sound `name` on the audio context `c` into `dest` (its destination at full scale). */
export function synth(name, c, dest = c.destination) {
  const start = c.currentTime + 0.005;
  SOUNDS[name]?.((at, freq, dur, opts) => note(c, dest, start + at, freq, dur, opts));
}

export function sound(name) {
  if (!enabled) return;
  try {
    const c = ensure();
    if (!c || !SOUNDS[name]) return;
    window.__mercylessSounds?.push(name); // a test's record (tests/web/test_sound.py sets the list)
    synth(name, c, out);
  } catch {
    /* audio is a nicety */
  }
}
