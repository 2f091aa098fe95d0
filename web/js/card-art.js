// A card's face drawn once as an SVG image per card, cut and language, and shown on the card's one
// .face element (cards.js). The colour and its pattern stay the face's CSS background under it (the
// colour-blind theme changes them); the white border and the shadow stay the card's own.
//
// -- speed: a face of elements (corners, oval, value, symbol: 8-10 boxes with text) cost a phone
// its style and layout pass for every card that arrived or changed; an image is one box, its text
// laid out once inside the image, whichever cards show it (docs/performance.md, the browser).
// An SVG image is still laid out and drawn again on the page's main thread each time a card of
// that face is painted at a new size (a busy turn's frame spent 20-30 ms of a mid phone's time
// there), so each face a page shows is then drawn once into a bitmap, while the page is idle, and
// shown as that: a bitmap is decoded and scaled off the main thread.
//
// Units: the face of a card 100 wide (its white border 5.5 each side), so 89 x 137; a size that
// style.css gave as calc(var(--w) * k) when the faces were elements is k * 100 here.

const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', 'Noto Sans', 'DejaVu Sans', Arial, sans-serif";
const FW = 89;
const FH = 137;
const CX = FW / 2;
const CY = FH / 2;

let palette = null;
let ruler = null;

function colours() {
  if (!palette) {
    const css = getComputedStyle(document.documentElement);
    const get = (name, fallback) => css.getPropertyValue(name).trim() || fallback;
    palette = { red: get("--red", "#d8482f"), yellow: get("--yellow", "#eec22f"), green: get("--green", "#149a70"),
      blue: get("--blue", "#2f6fc0"), wild: get("--wild", "#1b1b24") };
  }
  return palette;
}

/** How wide a text is in a bold face of this size (for the corners, laid out as style.css did). */
function width(text, size, spacing = 0) {
  if (!ruler) ruler = document.createElement("canvas").getContext("2d");
  ruler.font = `900 ${size}px ${FONT}`;
  return ruler.measureText(text).width + spacing * size * text.length;
}

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** An icon (cards.js ICONS, 24 x 24) placed in a box, its colours made concrete. */
function icon(markup, x, y, size, ink) {
  const pal = colours();
  return markup.replace(/currentColor/g, ink)
    .replace(/var\(--(red|yellow|green|blue)\)/g, (_, c) => pal[c])
    .replace(/^<svg /, `<svg x="${x}" y="${y}" width="${size}" height="${size}" `);
}

function text(s, x, y, size, fill, more = "") {
  return `<text x="${x}" y="${y}" font-size="${size}" fill="${fill}" ${more}>${esc(s)}</text>`;
}

/** A corner's column: the colour letter over the value or mark, centred on each other. */
function column(letter, mark, markIcon, ink) {
  const lw = width(letter, 19, -0.02);
  const mw = markIcon ? 20 : mark ? width(mark, 17) : 0;
  const w = Math.max(lw, mw);
  const parts = [text(letter, w / 2, 15, 19, ink, 'letter-spacing="-0.38"')];
  if (markIcon) parts.push(icon(markIcon, (w - 20) / 2, 20, 20, ink));
  else if (mark) parts.push(text(mark, w / 2, 33.5, 17, ink));
  return { svg: parts.join(""), w, h: markIcon ? 40 : mark ? 37 : 19 };
}

/** The oval, turned -28deg about the face's middle; a wild's (but the roulette's and the plain
 * wild's) is the four colours, red top right, as the conic gradient turned with the oval was. */
function oval(p, xs, pal) {
  const rx = FW * (xs ? 0.46 : 0.38);
  const ry = FH * (xs ? 0.32 : 0.29);
  const turn = `rotate(-28 ${CX} ${CY})`;
  if (!p.wild || p.kind === "roulette" || p.kind === "wild") {
    return `<ellipse cx="${CX}" cy="${CY}" rx="${rx}" ry="${ry}" transform="${turn}" fill="#fff" stroke="rgba(0,0,0,.05)"/>`;
  }
  const quarter = (x, y, fill) => `<rect x="${x}" y="${y}" width="${rx}" height="${ry}" fill="${fill}"/>`;
  return `<defs><clipPath id="o"><ellipse cx="${CX}" cy="${CY}" rx="${rx}" ry="${ry}"/></clipPath></defs>`
    + `<g transform="${turn}"><g clip-path="url(#o)">${quarter(CX - rx, CY - ry, pal.blue)}${quarter(CX, CY - ry, pal.red)}`
    + `${quarter(CX, CY, pal.yellow)}${quarter(CX - rx, CY, pal.green)}</g></g>`;
}

/**
 * A face: its SVG, and where its top-left corner lies on the card ([left, top, right, bottom], as
 * fractions of the card's width and height; null when it has none). cut "full": both corners;
 * "xs": none, the value and symbol larger for the size (a log's 22 px cards). s: the card's
 * symbols (cards.js); icons: cards.js ICONS.
 */
export function faceSvg(p, s, letter, cut, icons) {
  const pal = colours();
  const ink = p.c === "y" ? "#1c1500" : "#fff";
  const deep = p.c === "y" ? "#a87a00" : pal[p.color] || pal.wild; // the value and symbol on the oval
  const xs = cut === "xs";
  const rev4 = p.kind === "reverse4" && !xs; // the arrows above the +4, along the oval's axis
  const out = [oval(p, xs, pal)];
  const px = xs ? FW / 19 : 1; // an xs face's sizes were pixels of its 19 px face
  if (s.icon) {
    const size = xs ? 11 * px : rev4 ? 30 : p.kind === "roulette" || p.kind === "wild" ? 55 : 42;
    const x = (rev4 ? CX - 6.57 : CX) - size / 2;
    const y = (rev4 ? CY - 12.36 : CY) - size / 2;
    if (rev4) out.push(icon(icons[s.icon], x, y + 1.4, size, "#000")); // its drop shadow
    out.push(icon(icons[s.icon], x, y, size, rev4 ? "#fff" : deep));
  }
  if (s.big) {
    const long = s.big.length > 2;
    const size = xs ? (long ? 8 : 10) * px : rev4 ? 27 : p.wild ? (long ? 33 : 40) : long ? 34 : 46;
    const x = rev4 ? CX + 7.28 : CX;
    const y = rev4 ? CY + 13.68 : CY;
    const common = `text-anchor="middle" dominant-baseline="central" letter-spacing="${-0.04 * size}"`;
    if (p.wild) { // white, outlined, with a hard shadow
      const stroke = `${common} stroke="#111" stroke-width="1.8"`;
      if (!xs) out.push(text(s.big, x, y + 2.8, size, "#111", stroke));
      out.push(text(s.big, x, y, size, "#fff", stroke));
    } else {
      if (!xs) out.push(text(s.big, x + 1.4, y + 1.4, size, "rgba(0,0,0,.12)", common));
      out.push(text(s.big, x, y, size, deep, common));
    }
  }
  let corner = null;
  if (!xs) {
    // the top-left corner names the card by itself (in an overlapped hand it is what shows): the
    // colour letter, then the value, or the symbol of a card without one ("W +4" is the Reverse +4)
    const tlIcon = s.icon && !s.big ? icons[s.icon] : null;
    const tl = column(letter, tlIcon ? null : s.corner, tlIcon, ink);
    out.push(`<g transform="translate(5 4)" text-anchor="middle">${tl.svg}</g>`);
    // its mirror, bottom right: a card's symbol, else its value
    const brIcon = s.icon ? icons[s.icon] : null;
    const br = column(letter, brIcon ? null : s.corner, brIcon, ink);
    out.push(`<g transform="translate(${FW - 5} ${FH - 4}) rotate(180)" text-anchor="middle">${br.svg}</g>`);
    // on the card: its 5.5% border, then the corner 5 across and 4 down the face
    corner = [10.5 / 100, 9.5 / 148, (10.5 + tl.w) / 100, (9.5 + tl.h) / 148].map((f) => Math.round(f * 1000) / 1000);
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${FW} ${FH}" font-family="${FONT}" font-weight="900">${out.join("")}</svg>`;
  return { svg, corner };
}

const made = new Map();
let sheet = null;
// a browser without constructed style sheets (Safari before 16.4) sets each face's own style
// through the CSSOM, which the CSP allows; an inline <style> it would not
const SHEETS = typeof CSSStyleSheet === "function" && "adoptedStyleSheets" in Document.prototype;

/**
 * How a face shows its image: a class (a rule of a sheet of the page's own) or, without such
 * sheets, a style for the element; and the face's corner (faceSvg). Made once per key: the faces
 * of a room are a few dozen. `shown`: a face the page is about to show, then drawn as a bitmap.
 */
export function faceArt(key, make, shown = false) {
  let art = made.get(key);
  if (art && shown && art.rule && !art.shown) { // made ahead, now on the page
    art.shown = true;
    toBitmap(art, true);
  }
  if (!art) {
    // -- speed: a rule that every face of this card shares, so its image is parsed and loaded once,
    // not for each element that shows it (as an element's own style or a custom property was); a
    // blob: URL costs two trips to the browser's process to make (~2 ms a face on a slow phone).
    // The image is the face's border image, its middle filled: drawn over the face's background
    // (the colour and its pattern, style.css and theme.css), with no border around it.
    const { svg, corner } = make();
    const image = `url("data:image/svg+xml,${encodeURIComponent(svg)}") 0 fill / 0 stretch`;
    if (SHEETS) {
      if (!sheet) {
        sheet = new CSSStyleSheet();
        document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
      }
      art = { cls: `art${made.size}`, image: null, corner, svg, cut: key.split("|")[1], px: 0 };
      art.rule = sheet.cssRules[sheet.insertRule(`.${art.cls}{border-image:${image}}`, sheet.cssRules.length)];
      // only a face the page shows is drawn as a bitmap: drawing all of them ahead (~140) kept a
      // slow phone's main thread busy through the first minute of a game
      art.shown = shown;
      if (shown) toBitmap(art, true);
    } else {
      art = { cls: null, image, corner };
    }
    made.set(key, art);
  }
  return art;
}

// -- faces as bitmaps: drawn from the SVG at the size of the largest card that shows them (style.css
// --card-art-w, in CSS pixels, times the screen's pixel ratio), one at a time while the page is idle,
// and drawn again when the ratio grows (a zoom, another screen) or a larger card comes (the TV's)
/** Runs `f` when the page is idle (a short timeout where the browser has no idle callbacks). */
export const idle = window.requestIdleCallback || ((f) => setTimeout(() => f({ timeRemaining: () => 5 }), 30));
const queue = [];
// faces drawn at once: the steps of one (decoding, encoding, reading) mostly wait on other threads,
// so a page's first faces become bitmaps in under half the time, before its first busy turn
const AT_ONCE = 3;
let drawing = 0;

/** Queues a face to draw (`first`: before the others, for a face the page shows). */
function toBitmap(art, first = false) {
  const at = queue.indexOf(art);
  if (at >= 0 && !first) return; // queued: the drawing goes on
  if (at >= 0) queue.splice(at, 1);
  if (first) queue.unshift(art);
  else queue.push(art);
  while (drawing < Math.min(AT_ONCE, queue.length)) {
    drawing += 1;
    idle(drawNext);
  }
}

/** Device pixels across the bitmap of a face of this cut (0: keep the SVG). */
function bitmapWidth(cut) {
  const css = parseFloat(getComputedStyle(document.body).getPropertyValue("--card-art-w")) || 0;
  const ratio = Math.min(window.devicePixelRatio || 1, 4);
  // an xs face is a log's 22 px card: 36 leaves room for the TV's, which follow its text size
  return Math.ceil((cut === "xs" ? 36 : css) * ratio * (FW / 100));
}

function drawNext() {
  const art = queue.shift();
  if (!art) {
    drawing -= 1;
    return;
  }
  const w = bitmapWidth(art.cut);
  if (!w || art.px >= w) {
    idle(drawNext);
    return;
  }
  const source = new Image();
  source.src = `data:image/svg+xml,${encodeURIComponent(art.svg)}`;
  source.decode()
    .then(() => new Promise((resolve, reject) => idle(() => {
      const canvas = document.createElement("canvas");
      canvas.width = w;
      canvas.height = Math.ceil((w * FH) / FW);
      canvas.getContext("2d").drawImage(source, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("no bitmap"))), "image/png");
    })))
    // a data: URL (read off the main thread), not a blob: one: the CSP allows data: images, and a
    // blob: URL costs trips to the browser's process
    .then((blob) => new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result);
      reader.onerror = reject;
      reader.readAsDataURL(blob);
    }))
    .then((url) => {
      // decoded before the rule shows it: the face never blinks
      const ready = new Image();
      ready.src = url;
      return ready.decode().then(() => {
        art.rule.style.borderImageSource = `url("${url}")`;
        art.px = w;
      });
    })
    .catch(() => {}) // the SVG stays
    .finally(() => idle(drawNext));
}

function watchRatio() {
  matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`).addEventListener("change", () => {
    refreshFaces();
    watchRatio();
  }, { once: true });
}
/** Faces are drawn again when a larger card may show them (a page that became the TV's, a phone
 * turned to landscape): drawNext skips those already drawn as large. */
export function refreshFaces() {
  for (const art of made.values()) if (art.rule && art.shown) toBitmap(art);
}

if (SHEETS) {
  watchRatio();
  matchMedia("(max-width: 600px)").addEventListener("change", refreshFaces); // style.css --card-art-w
}
