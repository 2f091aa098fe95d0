// The middle of the table: the draw pile, the discard's top card, the colour in play, the direction
// and the stack of draw cards waiting for someone.
import { cardFace, cardName, colorName } from "../cards.js";
import { S, legal, name } from "../core.js";
import { h, replace, setAttr, setText, svg } from "../dom.js";
import { t } from "../i18n.js";
import { T } from "./state.js";

const DIR_ICON = '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round" stroke-linejoin="round"><path d="M20 12a8 8 0 1 1-2.34-5.66"/><path d="M20 3v5h-5"/></svg>';

export function renderCenter(v) {
  const g = v.game;
  const lg = legal();
  const stackOnMe = g.stack && g.stack.target === S.you;
  setText(T.pileBtn.querySelector(".pile-count"), String(g.draw_pile));
  const canDraw = lg.draw && !g.winner;
  setAttr(T.pileBtn, "aria-disabled", String(!canDraw));
  T.pileBtn.classList.toggle("can", !!canDraw);
  let label = t("table.drawPile", { n: g.draw_pile });
  if (canDraw) label += `. ${stackOnMe ? t("table.take", { n: g.stack.total }) : t("table.draw")}`;
  setAttr(T.pileBtn, "aria-label", label);
  const topKey = `${v.room.round}:${g.top}:${g.discard_pile}`;
  if (T.topKey !== topKey) {
    const card = cardFace(g.top, { size: "lg" });
    card.setAttribute("aria-label", t("table.discard", { card: cardName(g.top), color: colorName(g.color) }));
    card.tabIndex = 0; // ? on it tells what it does (help/tip.js)
    replace(T.discard, card);
    T.topKey = topKey;
  }
  T.discard.className = `discard ring-${g.color[0]}`;
  // the colour and the direction change a few times a round, not every patch
  const infoKey = `${g.color}:${g.direction}`;
  if (T.infoKey === infoKey) return;
  T.infoKey = infoKey;
  replace(T.colorChip, h("span.swatch", { class: `sw-${g.color[0]}`, "aria-hidden": "true" }, t(`letter.${g.color[0]}`)),
    h("span", `${t("table.color")}: `, h("b", colorName(g.color))));
  T.colorChip.className = `color-chip cc-${g.color[0]}`;
  replace(T.dirEl, svg(DIR_ICON, `dir-icon${g.direction < 0 ? " ccw" : ""}`), h("span", t(`table.direction.${g.direction}`)));
}

export function renderStack(v) {
  const g = v.game;
  const s = g.stack;
  if (!s || g.winner) {
    T.stackBar.hidden = true;
    return;
  }
  T.stackBar.hidden = false;
  const onMe = s.target === S.you;
  T.stackBar.classList.toggle("on-me", onMe);
  const key = `${s.total}:${s.last}:${s.target}:${name(s.target)}`;
  if (T.stackKey === key) return;
  T.stackKey = key;
  replace(T.stackBar, h("span.stack-total", `+${s.total}`),
    h("span.stack-text", onMe ? t("table.stackOnYou", { total: s.total, last: s.last }) : t("table.stackOn", { total: s.total, last: s.last, name: name(s.target) })));
}
