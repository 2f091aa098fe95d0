// The screen kept on while the player holds a seat in a round (a phone lying on the table between
// turns must not lock), let go between rounds, off the table and while the page is hidden, and
// taken again on return. The Wake Lock API where the browser has it; on a page without it (a
// plain-http 192.168.x.x address is not a secure context) the classic trick NoSleep.js uses: a muted
// inline video playing, here of a tiny canvas's stream, so no media file and nothing the page's
// Content-Security-Policy would have to allow. Browsers start a video only after a tap: the first
// tap starts it. A setting turns all of it off (remembered per browser).
import { S } from "./core.js";

const KEY = "mercyless.awake"; // "off" when the player turned it off

let lock = null; // the WakeLockSentinel held
let asking = false;
let video = null; // the fallback's player, made once
let painter = null;
let waitingForTap = false;

export function keepAwakeOn() {
  return localStorage.getItem(KEY) !== "off";
}

export function setKeepAwake(on) {
  if (on) localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, "off");
  update();
}

/** Whether the page holds the screen on now (either way). */
export function holdingAwake() {
  return !!lock || !!(video && !video.paused);
}

function seatedInRound() {
  const body = document.body.dataset;
  return body.screen === "room" && body.status === "playing" && !!S.view?.players?.some((p) => p.id === S.you);
}

function wanted() {
  return keepAwakeOn() && document.visibilityState === "visible" && seatedInRound();
}

/** Follows the page from then on: the screen shown, the room's status, the page's visibility. */
export function setupWake() {
  new MutationObserver(update).observe(document.body, { attributes: true, attributeFilter: ["data-screen", "data-status"] });
  document.addEventListener("visibilitychange", update);
  update();
}

export function update() {
  if (wanted()) hold();
  else letGo();
}

async function hold() {
  if (!("wakeLock" in navigator)) {
    playVideo();
    return;
  }
  if (lock || asking) return;
  asking = true;
  try {
    const sentinel = await navigator.wakeLock.request("screen");
    sentinel.addEventListener("release", () => {
      if (lock === sentinel) lock = null; // the browser let go (the page hidden): taken again on return
    });
    lock = sentinel;
  } catch {
    /* refused (a battery saver, a browser policy): the screen follows the phone's own settings */
  } finally {
    asking = false;
  }
  if (!wanted()) letGo(); // the round ended while the browser was asked
}

function letGo() {
  const held = lock;
  lock = null;
  held?.release().catch(() => {});
  if (video && !video.paused) video.pause();
  clearInterval(painter);
  painter = null;
}

function makeVideo() {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 2;
  if (typeof canvas.captureStream !== "function") return null;
  const v = document.createElement("video");
  v.muted = true;
  v.playsInline = true;
  v.setAttribute("playsinline", "");
  v.setAttribute("aria-hidden", "true");
  v.srcObject = canvas.captureStream(1);
  v.canvas = canvas;
  return v;
}

function playVideo() {
  video ||= makeVideo();
  if (!video || !video.paused) return;
  if (navigator.userActivation && !navigator.userActivation.hasBeenActive) {
    waitForTap();
    return;
  }
  // a canvas stream sends a frame only when the canvas changes: one a second keeps it playing
  const ctx = video.canvas.getContext("2d");
  let n = 0;
  clearInterval(painter);
  painter = setInterval(() => {
    n += 1;
    ctx.fillStyle = n % 2 ? "#000" : "#010101";
    ctx.fillRect(0, 0, 2, 2);
  }, 1000);
  video.play().catch(() => {
    clearInterval(painter);
    painter = null;
    waitForTap();
  });
}

/** Playing was refused for want of a tap: the next tap (a card, a button) starts it. */
function waitForTap() {
  if (waitingForTap) return;
  waitingForTap = true;
  const onTap = () => {
    waitingForTap = false;
    window.removeEventListener("click", onTap, true);
    window.removeEventListener("keydown", onTap, true);
    if (wanted()) playVideo();
  };
  // a click, not a pointerdown: a finger's pointerdown gives the page no right to play yet
  window.addEventListener("click", onTap, true);
  window.addEventListener("keydown", onTap, true);
}
