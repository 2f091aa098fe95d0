// How a round's points came about (rules.md "Ending and scoring"): the winner scores the cards
// still held by the other players in the round (numbers their face value, coloured action cards
// 20, wilds 50) plus 250 for each player knocked out; knocked-out hands and the winner's own
// hand are not counted. Built from the view at round over (game.revealed, players[].eliminated).
import { cardFace, cardName, parse, sortHand } from "../cards.js";
import { S, name } from "../core.js";
import { h } from "../dom.js";
import { t } from "../i18n.js";

export const KNOCKOUT_BONUS = 250;

export function cardPoints(code) {
  const p = parse(code);
  if (p.number !== null) return p.number;
  return p.wild ? 50 : 20;
}

/** {rows: [{id, cards, points, out, winner}], knockedOut, bonus, total} in seat order. */
export function breakdown(view) {
  const g = view.game || {};
  const revealed = g.revealed || {};
  const rows = (view.players || []).map((p) => {
    const cards = sortHand(revealed[p.id] || []);
    const winner = p.id === g.winner;
    const counted = !winner && !p.eliminated;
    return { id: p.id, name: p.name, cards, winner, out: !!p.eliminated,
      points: counted ? cards.reduce((sum, c) => sum + cardPoints(c), 0) : 0 };
  });
  const knockedOut = rows.filter((r) => r.out).length;
  const bonus = knockedOut * KNOCKOUT_BONUS;
  const total = rows.reduce((sum, r) => sum + r.points, 0) + bonus;
  return { rows, knockedOut, bonus, total };
}

function chips(cards, counted) {
  return h("span.pts-cards", cards.map((c) => h("span.pts-card", { title: cardName(c) },
    cardFace(c, { size: "xs" }), counted ? h("small.pts-value", String(cardPoints(c))) : null)));
}

/** The "How the points were counted" block of the round-over panel. */
export function pointsExplained(view) {
  const b = breakdown(view);
  const g = view.game || {};
  const you = (id) => (id === S.you ? h("span.tag", ` (${t("lobby.you")})`) : null);
  const items = [];
  for (const r of b.rows) {
    if (r.winner) {
      items.push(h("li.pts-row.pts-winner", { "data-player": r.id },
        h("span.pts-name", r.name || name(r.id), you(r.id)),
        r.cards.length ? chips(r.cards, false) : null,
        h("span.pts-note", t(r.cards.length ? "pts.winnerHand" : "pts.winnerEmpty"))));
    } else if (r.out) {
      items.push(h("li.pts-row.pts-out", { "data-player": r.id },
        h("span.pts-name", r.name || name(r.id), you(r.id)),
        h("span.pts-note", t("pts.out", { n: KNOCKOUT_BONUS }))));
    } else {
      items.push(h("li.pts-row", { "data-player": r.id },
        h("span.pts-name", r.name || name(r.id), you(r.id)),
        r.cards.length ? chips(r.cards, true) : h("span.pts-note", t("pts.noCards")),
        h("b.pts-sum", `${r.points}`)));
    }
  }
  if (b.knockedOut) {
    items.push(h("li.pts-row.pts-bonus", h("span.pts-name", t("pts.bonus", { n: KNOCKOUT_BONUS, k: b.knockedOut })),
      h("b.pts-sum", `${b.bonus}`)));
  }
  const total = typeof g.points === "number" ? g.points : b.total;
  const winner = b.rows.find((r) => r.winner);
  items.push(h("li.pts-row.pts-total", h("span.pts-name", t("pts.total", { name: winner?.name || name(g.winner) })), h("b.pts-sum", `+${total}`)));
  return h("div.pts", h("h3", t("pts.title")), h("ul.pts-list", items));
}

/** Why the match ended: the winner's score reached the target. */
export function matchReason(view) {
  const g = view.game || {};
  const w = (view.players || []).find((p) => p.id === g.winner);
  return t("pts.matchReason", { name: w?.name || name(g.winner), score: w ? w.score : "?", target: view.room.rules.target_score });
}
