// Every event kind in words (protocol.md EVENT plus docs/engine.md additions).
import { cardList, cardName, colorName } from "./cards.js";
import { t } from "./i18n.js";

/**
 * One line for `ev`, or null for events not worth a line. `name(id)` gives a display name;
 * `you` is the viewer's id; `host` the id of who ran the room then (the host's own events, a
 * removal or a lock, do not name them). Returns {text, cls, cards} (cards: codes to show as chips).
 */
export function describe(ev, name, you, host = null) {
  const p = ev.player ? name(ev.player) : "";
  const by = host ? name(host) : t("ev.theHost");
  switch (ev.kind) {
    case "joined":
      return { text: t(ev.screen ? "ev.joinedScreen" : ev.spectator ? "ev.joinedSpectator" : "ev.joined", { name: ev.name || p }),
        cls: "meta" };
    case "left":
      return { text: ev.removed ? t("ev.removed", { p, by }) : t("ev.left", { p }), cls: "meta" };
    case "lobby":
      return { text: t("ev.lobby", { p }), cls: "meta" };
    case "room_changed":
      return { text: t(ev.readmitted ? "ev.readmitted" : ev.locked ? "ev.locked" : "ev.unlocked", { by }), cls: "meta" };
    case "bot_level":
      return { text: t("ev.bot_level", { p, level: t(`level.${ev.level}`) }), cls: "meta" };
    case "bot_added":
      return { text: t("ev.bot_added", { name: ev.name || p, level: t(`level.${ev.level}`) }), cls: "meta" };
    case "started":
      return { text: t("ev.started", { round: ev.round ?? "", dealer: name(ev.dealer), card: cardName(ev.top) })
        + (!ev.replayed_from ? "" : ` ${ev.replayed_from.deal ? t("deal.startedShared") : t("deal.startedAgain", { n: ev.replayed_from.round })}`),
      cls: "big", cards: [ev.top] };
    case "played":
      return { text: t("ev.played", { p, card: cardName(ev.card) }), cls: ev.player === you ? "mine" : "", cards: [ev.card] };
    case "drew":
      if (ev.cards && ev.player === you) return { text: t("ev.drewOwn", { cards: cardList(ev.cards) }), cls: "mine", cards: ev.cards };
      return { text: t("ev.drew", { p, count: ev.count }) };
    case "took_stack":
      if (ev.cards && ev.player === you) return { text: t("ev.took_stackOwn", { count: ev.count, cards: cardList(ev.cards) }), cls: "bad", cards: ev.cards };
      return { text: t("ev.took_stack", { p, count: ev.count }), cls: "bad" };
    case "color":
      return { text: t("ev.color", { p, color: colorName(ev.color) }), colorDot: ev.color };
    case "skipped":
      return { text: t("ev.skipped", { players: (ev.players || []).map(name).join(", ") }) };
    case "reversed":
      return { text: t("ev.reversed", { dir: t(`table.direction.${ev.direction ?? 1}`) }) };
    case "swapped":
      return { text: t("ev.swapped", { a: name(ev.a), b: name(ev.b) }), cls: "big" };
    case "passed_hands":
      return { text: t("ev.passed_hands"), cls: "big" };
    case "discarded":
      return { text: t("ev.discarded", { p, cards: cardList(ev.cards || []) }), cards: ev.cards };
    case "roulette":
      return {
        text: t("ev.roulette", { p, color: colorName(ev.color), count: (ev.cards || []).length, cards: cardList(ev.cards || []) }),
        cls: "bad", cards: ev.cards,
      };
    case "uno":
      return { text: t("ev.uno", { p }), cls: "good" };
    case "exposed":
      return { text: t("ev.exposed", { p }), cls: "warn" };
    case "caught":
      return { text: t("ev.caught", { p, by: name(ev.by), count: ev.count }), cls: "bad" };
    case "eliminated":
      return { text: t("ev.eliminated", { p }), cls: "bad big" };
    case "reaction":
      return { text: t("ev.reaction", { p, reaction: t(`react.${ev.reaction}`) }), cls: "meta" };
    case "chat": // a phrase's id, said in the reader's language
      return { text: t("ev.chat", { p, phrase: t(`chat.${ev.phrase}`) }), cls: "chat" };
    case "night_over":
      return { text: t("ev.night_over", { by: ev.by ? name(ev.by) : by }), cls: "meta" };
    case "muted": {
      const key = ev.muted ? "ev.muted" : "ev.unmuted";
      return { text: t(ev.player === you ? `${key}You` : key, { p, by: ev.by ? name(ev.by) : by }), cls: "meta" };
    }
    case "round_over":
      return { text: t("ev.round_over", { p: name(ev.winner), points: ev.points ?? 0 }), cls: "good big" };
    case "match_over":
      return { text: t("ev.match_over", { p: name(ev.winner) }), cls: "good big" };
    case "disconnected":
      return { text: t("ev.disconnected", { p }), cls: "meta" };
    case "reconnected":
      return { text: t("ev.reconnected", { p }), cls: "meta" };
    case "replaced_by_bot":
      return { text: t("ev.replaced_by_bot", { p }), cls: "meta" };
    case "passed":
      return { text: t("ev.passed", { p }) };
    case "cancelled":
      return { text: t("ev.cancelled", { p }), cls: "meta" };
    case "window_closed":
      return { text: t("ev.window_closed", { p }), cls: "meta" };
    case "timed_out":
      return { text: t("ev.timed_out", { p }), cls: "warn" };
    case "reshuffled":
      return { text: t("ev.reshuffled", { count: ev.count }), cls: "meta" };
    case "rules_changed":
      return { text: t("ev.rules_changed"), cls: "meta" };
    default:
      return null;
  }
}
