// The fair deal, checked by this browser (protocol.md "Fair deal"): the commitment (SHA-256 of the
// round's seed) is kept from while the round is played, and once the seed is shown at round over
// its hash must be that commitment, or the server changed the deal after dealing it. The round's
// page in the history asks the server to deal the round again from its seed
// (GET /api/rounds/{id}/verify: the engine is Python) and shows what it says.
import { h, replace } from "./dom.js";
import { t } from "./i18n.js";
import { Api } from "./net.js";
import { sha256Hex } from "./sha256.js";

const seen = new Map(); // "CODE:match:round" -> the commitment seen first
const checked = new Map(); // "seed\ncommitment" -> Promise<boolean>
const KEEP = 32; // rounds remembered (a long night in one tab)

const roundKey = (v) => `${v.room.code}:${v.room.match ?? 0}:${v.room.round}`;

/** Called with every view: the commitment as first seen for its round (a page that came in
 * mid-round takes it from its first view; one that came after the round ended, from that). */
export function noteCommitment(v) {
  const c = v?.game?.deal_commitment;
  if (!c || !v.room) return;
  const key = roundKey(v);
  if (seen.has(key)) return;
  seen.set(key, c);
  if (seen.size > KEEP) seen.delete(seen.keys().next().value);
}

function check(seed, commitment) {
  const key = `${seed}\n${commitment}`;
  if (!checked.has(key)) checked.set(key, sha256Hex(seed).then((hex) => hex === commitment.toLowerCase(), () => null));
  return checked.get(key);
}

/** The round-over panel's quiet mark: "Fair deal checked ✓", or a warning when the seed shown
 * does not hash to the commitment shown at the deal. Null while the round holds no seed. */
export function fairDealMark(v) {
  const g = v.game || {};
  const commitment = seen.get(roundKey(v)) || g.deal_commitment;
  if (!g.deal_seed || !commitment) return null;
  const mark = h("p.fair-deal", { "data-state": "checking", role: "status" }, t("fair.checking"));
  check(g.deal_seed, commitment).then((ok) => {
    const state = ok === null ? "unknown" : ok ? "ok" : "bad";
    mark.dataset.state = state;
    mark.title = t(`fair.${state}.tip`, { seed: g.deal_seed, hash: commitment });
    replace(mark, h("span.fd-mark", { "aria-hidden": "true" }, state === "ok" ? "✓" : state === "bad" ? "⚠" : "?"),
      h("span.fd-text", t(`fair.${state}`)));
    if (state === "bad") mark.setAttribute("role", "alert");
  });
  return mark;
}

/** The "Check this deal" button of a round's page in the history, and where its answer goes. */
export function dealCheck(roundId, token) {
  const out = h("div.deal-verdict", { "aria-live": "polite" });
  const button = h("button.btn.small.deal-check", { type: "button", "data-key": "check-deal", onclick: go }, t("fair.checkDeal"));
  async function go() {
    button.disabled = true;
    replace(out, h("p.note", t("fair.checking")));
    let got;
    try {
      got = await Api.verifyRound(roundId, token);
    } catch {
      replace(out, h("p.form-error", { role: "alert" }, t("fair.checkFailed")));
      button.disabled = false;
      return;
    }
    replace(out, h("p.fair-deal", { "data-state": got.ok ? "ok" : "bad", role: got.ok ? "status" : "alert" },
      h("span.fd-mark", { "aria-hidden": "true" }, got.ok ? "✓" : "⚠"),
      h("span.fd-text", t(got.ok ? "fair.dealOk" : "fair.dealBad"))),
    got.ok ? null : h("ul.fd-problems", (got.problems || []).map((p) => h("li", p))),
    h("p.hint.fd-how", t("fair.dealHow", { id: roundId })),
    h("p.hint.fd-seed", t("fair.seed"), " ", h("code", got.seed || "")));
    button.disabled = false;
  }
  return h("div.deal-check-block", button, out);
}
