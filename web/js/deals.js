// A deal played again (issue #47): the host's "Play this deal again" on the round-over panel
// (replay_deal: the next round is dealt from the finished round's seed, so every seat gets the hand
// it had), and in the night's scores, a replayed round's link to its original with the two results
// side by side. A finished round's deal shared with another room: "Share this deal" gives a link
// (/?deal=<round id>); whoever opens it and makes a room has the deal picked there (POST
// /api/rooms/{code}/deal), and the lobby says so.
import { S, isHost, name, send, toast } from "./core.js";
import { h, replace } from "./dom.js";
import { t } from "./i18n.js";
import { Api, Seats } from "./net.js";

const PENDING_KEY = "mercyless.deal";
const ID_RE = /^[A-Za-z0-9_-]{22}$/;
const WRITE_WAIT_MS = 600;
const WRITE_TRIES = 10;

/** The host's button on the round-over panel. */
export function replayDealButton() {
  return h("button.btn.big.replay-deal", { type: "button", "data-key": "replay-deal", onclick: () => send("replay_deal") },
    t("deal.again"));
}

/** Every round of a history answer by its id, with the number of its match. */
function roundsById(matches) {
  const out = new Map();
  for (const m of matches || []) for (const r of m.rounds || []) if (r.id) out.set(r.id, { ...r, match: m.number });
  return out;
}

/** Another room's round a deal was shared from, as a round of the record (its players' names are
 * not shared: seats by number). */
function sharedOriginal(result) {
  const seats = (result.seats || []).map((s) => ({ ...s, id: `seat:${s.seat}`, name: t("deal.seatN", { n: s.seat + 1 }) }));
  return { id: result.id, label: t("deal.sharedCol"), winner: `seat:${result.winner_seat}`, points: result.points, seats };
}

/** A round's mark in the night's scores when it was a deal played again (here, or another room's
 * shared deal): whose deal, and a button that shows both results side by side. Null for any other
 * round. */
export function replayMark(r, matches, deals) {
  if (!r.replay_of && !(r.deal_of && deals?.[r.deal_of])) return null;
  const rounds = roundsById(matches);
  const original = r.replay_of ? rounds.get(r.replay_of) : sharedOriginal(deals[r.deal_of]);
  const replay = rounds.get(r.id);
  if (!original || !replay) return null;
  const label = r.replay_of ? t("deal.of", { n: original.number, m: original.match }) : t("deal.ofShared");
  return h("span.hr-deal", h("span.hr-deal-of", label),
    h("button.btn.small.ghost.hr-compare", { type: "button", "data-key": "deal-compare",
      "aria-label": t("deal.compareRound", { n: replay.number }), onclick: () => openCompare(original, replay) },
    t("deal.compare")));
}

function seatLine(r, seat) {
  const s = (r.seats || []).find((x) => x.seat === seat);
  if (!s) return h("td", "–");
  const won = s.id === r.winner;
  return h("td", { class: won ? "win" : s.eliminated ? "out" : "" },
    h("span.cmp-name", s.name || name(s.id)),
    h("span.cmp-how", won ? t("deal.won") : s.eliminated ? t("hist.out")
      : s.final_cards === 1 ? t("deal.oneCard") : t("hist.cards", { n: s.final_cards ?? 0 })));
}

/** Both rounds of one deal: seat by seat (each seat had the same hand in both), who won, the points. */
export function compareTable(original, replay) {
  const seats = Math.max(original.seats?.length || 0, replay.seats?.length || 0);
  const head = (r) => h("th", { scope: "col" }, r.label || t("deal.roundOf", { n: r.number, m: r.match }));
  const winner = (r) => (r.seats || []).find((s) => s.id === r.winner)?.name || name(r.winner);
  return h("table.deal-compare",
    h("caption", t("deal.compareDesc")),
    h("thead", h("tr", h("th", { scope: "col" }, t("deal.seat")), head(original), head(replay))),
    h("tbody", Array.from({ length: seats }, (_, i) => h("tr", { "data-seat": i },
      h("th", { scope: "row" }, `${i + 1}`), seatLine(original, i), seatLine(replay, i)))),
    h("tfoot",
      h("tr.cmp-winner", h("th", { scope: "row" }, t("deal.winner")), h("td", winner(original)), h("td", winner(replay))),
      h("tr.cmp-points", h("th", { scope: "row" }, t("deal.points")),
        h("td", `+${original.points ?? 0}`), h("td", `+${replay.points ?? 0}`))));
}

function openCompare(original, replay) {
  const body = h("div.dlg-body");
  const dlg = h("dialog.dlg.dlg-compare", { "aria-labelledby": "compare-h" }, body);
  dlg.addEventListener("close", () => dlg.remove());
  replace(body,
    h("h2#compare-h.dlg-title", t("deal.compareTitle")),
    compareTable(original, replay),
    h("div.dlg-actions", h("button.btn.ghost", { type: "button", onclick: () => dlg.close() }, t("hist.close"))));
  document.body.append(dlg);
  dlg.showModal();
}

// -- a deal shared with another room -----------------------------------------------------------

/** The room's token this browser holds. */
function token(code) {
  return S.sock && S.sock.code === code ? S.sock.token : Seats.get(code)?.token;
}

/** The id of the round on the table once the history has it (it is written a moment after it ends). */
async function finishedRoundId(v) {
  for (let i = 0; i < WRITE_TRIES; i += 1) {
    try {
      const got = await Api.history(S.code, token(S.code));
      const m = (got.matches || []).find((x) => x.number === v.room.match);
      const r = m?.rounds?.find((x) => x.number === v.room.round);
      if (r?.id) return r.id;
    } catch {
      /* tried again below */
    }
    await new Promise((done) => setTimeout(done, WRITE_WAIT_MS));
  }
  return null;
}

/** The host's "Share this deal": the link, copied (and shown, for a browser that cannot copy). */
export function shareDealButton(v) {
  const box = h("div.deal-share");
  const button = h("button.btn.big.share-deal", { type: "button", "data-key": "share-deal", onclick: async () => {
    button.disabled = true;
    const id = await finishedRoundId(v);
    button.disabled = false;
    if (!id) {
      toast(t("deal.shareFailed"), "error");
      return;
    }
    const url = `${location.origin}/?deal=${id}`;
    const field = h("input.deal-link", { type: "text", readOnly: true, value: url, "aria-label": t("deal.link"),
      onfocus: (e) => e.target.select() });
    replace(box, h("p.hint", t("deal.shareHint")), field);
    try {
      await navigator.clipboard.writeText(url);
      toast(t("deal.copied"));
    } catch {
      field.focus();
    }
  } }, t("deal.share"));
  return [button, box];
}

/** A shared deal's link was opened (/?deal=<id>): kept until this browser hosts a room's lobby. */
export function rememberDealLink() {
  const id = new URLSearchParams(location.search).get("deal");
  if (!id || !ID_RE.test(id)) return;
  sessionStorage.setItem(PENDING_KEY, id);
  history.replaceState(null, "", location.pathname);
  toast(t("deal.opened"));
}

let dealBox = null;

/** The lobby's note of the shared deal the next start deals (one element, kept across renders). */
export function dealPanel() {
  if (!dealBox) dealBox = h("section.panel.deal-panel", { hidden: true, "aria-live": "polite" });
  return dealBox;
}

/** After each view: hand a pending shared deal to the room this browser hosts, and show the deal. */
export function syncDeal() {
  const v = S.view;
  if (!v) return;
  const inLobby = v.room.status === "lobby";
  const pending = sessionStorage.getItem(PENDING_KEY);
  if (pending && inLobby && isHost()) {
    sessionStorage.removeItem(PENDING_KEY);
    Api.useDeal(S.code, pending, token(S.code)).catch(() => toast(t("deal.useFailed"), "error"));
  }
  const box = dealPanel();
  const deal = inLobby ? v.room.deal : null;
  const key = deal ? `${deal.id}:${isHost()}:${document.documentElement.lang}` : "";
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.hidden = !deal;
  if (!deal) {
    replace(box);
    return;
  }
  replace(box, h("h2", t("deal.sharedTitle")), h("p.note", t("deal.sharedDesc", { n: deal.seats })),
    isHost() ? h("button.btn.small.ghost", { type: "button", "data-key": "deal-drop",
      onclick: () => Api.useDeal(S.code, null, token(S.code)).catch(() => toast(t("deal.useFailed"), "error")) },
    t("deal.drop")) : null);
}
