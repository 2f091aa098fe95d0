// The host's hold on who is in the room: a bot's level, removing a seat or a spectator (a human is
// asked about first: the server bars them until the host lets removed players back in), muting a
// person's quick chat (chat.js) and the list of spectators, shown in the lobby and on the
// round-over panel.
import { S, botLevel, isHost, send } from "./core.js";
import { h, svg } from "./dom.js";
import { t } from "./i18n.js";

export const LEVELS = ["easy", "normal", "hard"];

/** A bot's badge: "Bot · hard", tinted by its level. */
export function botBadge(p) {
  const level = botLevel(p);
  return h("span.badge.badge-bot", { class: level ? `level-${level}` : "", "data-level": level || "" },
    level ? t("lobby.bot", { level: t(`level.${level}`) }) : t("lobby.botTag"));
}

/** The host's badge of a bot: the badge, with a select of its level lying transparent over it
 * (set_bot), as the rules' selects do: a phone's narrow seat shows the level alone, and the
 * native picker still opens on a tap. */
export function botLevelPicker(p) {
  const level = botLevel(p) || "easy";
  const select = h("select", { "data-key": `level:${p.id}`, "aria-label": t("lobby.botLevelOf", { name: p.name }),
    title: t("lobby.botLevelOf", { name: p.name }),
    onchange: (e) => send("set_bot", { player_id: p.id, level: e.target.value }).then((answer) => {
      if (answer?.type === "error") S.rerender?.();
    }) },
  LEVELS.map((l) => h("option", { value: l }, t(`level.${l}`))));
  select.value = level;
  return h("span.badge.badge-bot.level-pick", { class: `level-${level}`, "data-level": level },
    h("span.level-face", { "aria-hidden": "true" }, h("span.bb-prefix", `${t("lobby.botTag")} · `), t(`level.${level}`)), select);
}

/** Remove a seat or a spectator: a bot at once, a person after a confirm. */
export function removeMember(member) {
  if (member.bot) {
    send("remove_seat", { player_id: member.id });
    return;
  }
  const dlg = h("dialog.dlg.dlg-confirm", { "aria-labelledby": "remove-h", "aria-describedby": "remove-d" },
    h("div.dlg-body",
      h("h2#remove-h.dlg-title", t("lobby.removeTitle", { name: member.name })),
      h("p#remove-d.dlg-desc", t("lobby.removeConfirm", { name: member.name })),
      h("div.dlg-actions",
        h("button.btn.ghost", { type: "button", onclick: () => dlg.close() }, t("common.cancel")),
        h("button.btn.danger", { type: "button", "data-key": "remove-yes", onclick: () => {
          dlg.close();
          send("remove_seat", { player_id: member.id });
        } }, t("lobby.removeYes")))));
  dlg.addEventListener("close", () => dlg.remove());
  document.body.append(dlg);
  dlg.showModal();
}

/** The × that removes `member` (for the host). */
export function removeButton(member) {
  const label = t("lobby.remove", { name: member.name });
  return h("button.icon-btn.remove", { type: "button", "aria-label": label, title: label, "data-key": `remove:${member.id}`,
    onclick: () => removeMember(member) }, "×");
}

/** "muted" beside a person the host muted (their quick chat is refused), or null. */
export function mutedTag(member) {
  if (!S.view?.room?.muted?.includes(member.id)) return null;
  return h("span.badge.badge-muted", { title: t("chat.mutedNote") }, t("chat.muted"));
}

// a speech bubble; crossed out once muted
const CHAT_ON = '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round"><path d="M4 5h16v11H9l-5 4z"/></svg>';
const CHAT_OFF = '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"><path d="M4 5h16v11H9l-5 4z"/><path d="M3 3l18 18"/></svg>';

/** The host's Mute / Unmute of a person's quick chat. */
export function muteButton(member) {
  const muted = !!S.view?.room?.muted?.includes(member.id);
  const label = t(muted ? "chat.unmuteOf" : "chat.muteOf", { name: member.name });
  // an icon as small as the seat's ×: a worded button took a 360 px seat's name ("Mari…")
  return h("button.icon-btn.mute", { type: "button", "aria-label": label, title: label, "aria-pressed": String(muted),
    "data-key": `mute:${member.id}`, onclick: () => send("mute", { player_id: member.id, muted: !muted }) },
  svg(muted ? CHAT_OFF : CHAT_ON));
}

/** "Watching": the spectators, each with a × for the host; null when nobody watches. */
export function spectatorList(room) {
  const spectators = room.spectators || [];
  if (!spectators.length) return null;
  const host = isHost();
  return h("div.spectators",
    h("h3", t("lobby.spectators")),
    h("ul.spectator-list", spectators.map((s) => h("li.spectator", { "data-player": s.id, class: s.id === S.you ? "is-you" : "" },
      h("span.spectator-name", s.name, s.id === S.you ? h("span.tag", ` (${t("lobby.you")})`) : null),
      mutedTag(s),
      h("span.dot", { class: s.connected ? "on" : "off", role: "img", "aria-label": t(s.connected ? "online" : "offline"),
        title: t(s.connected ? "online" : "offline") }),
      host && !s.screen && s.id !== S.you ? muteButton(s) : null,
      host ? removeButton(s) : null))));
}

/** The host's "Bot plays" on a disconnected player's seat: their seat's bot plays it now rather
 * than after the turn's short grace (bot_plays); they take the seat back when they return. */
export function botPlaysButton(p) {
  const label = t("table.botPlaysLong", { name: p.name });
  return h("button.btn.small.bot-plays", { type: "button", "aria-label": label, title: label, "data-key": `bot-plays:${p.id}`,
    onclick: () => send("bot_plays", { player_id: p.id }) }, t("table.botPlays"));
}
