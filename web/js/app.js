// Mercyless browser client: the entry point. Routing (/ and /r/CODE) and the table's keyboard
// shortcuts; the pages are landing.js and room.js.
import { S } from "./core.js";
import { installCardHelp, setHelpRules } from "./help/tip.js";
import { detectLang, setLang, t } from "./i18n.js";
import { landingState, renderLanding, setLanding } from "./landing.js";
import { normalizeCode, Seats } from "./net.js";
import { setupPwa } from "./pwa.js";
import { openRoom } from "./room.js";
import { onTableKey } from "./table.js";
import { applyCardTheme } from "./theme.js";
import { rememberDealLink } from "./deals.js";
import { closeTv, openTv } from "./tv.js";
import { tvView } from "./tv-view.js";

document.addEventListener("keydown", (e) => {
  if (document.body.dataset.screen !== "room") return;
  if (document.querySelector("dialog[open]")) return;
  const tag = (e.target.tagName || "").toLowerCase();
  if (["input", "select", "textarea"].includes(tag)) return;
  onTableKey(e);
});

function route() {
  closeTv();
  // /tv/CODE: the big screen of a room (a spectator that never holds a player's token)
  const tv = /^\/tv\/([^/]+)\/?$/.exec(location.pathname);
  const tvCode = tv ? normalizeCode(decodeURIComponent(tv[1])) : null;
  if (tvCode) {
    S.sock?.close();
    S.sock = null;
    openTv(tvCode);
    return;
  }
  // /r/CODE; anything longer under /r/ (a pasted link with more after the code) is a bad code
  const m = /^\/r\/(.+?)\/?$/.exec(location.pathname);
  if (m) {
    const raw = decodeURIComponent(m[1]);
    const code = normalizeCode(raw);
    const seat = code ? Seats.get(code) : null;
    if (seat) {
      openRoom(code, seat);
      return;
    }
    S.sock?.close();
    S.sock = null;
    setLanding(code
      ? { invite: code, fromLink: true, error: null }
      : { invite: raw.toUpperCase().slice(0, 8), fromLink: false, error: t("err.code.format"), errorField: "code" });
    renderLanding();
    return;
  }
  S.sock?.close();
  S.sock = null;
  setLanding({ invite: null, error: landingState.error });
  renderLanding();
}

// card help everywhere, under the rules of the room on screen
setHelpRules(() => (document.body.dataset.screen === "tv" ? tvView() : S.view)?.room?.rules);
installCardHelp();

applyCardTheme();

window.addEventListener("popstate", route);
setLang(detectLang());
rememberDealLink(); // /?deal=<id>: a shared deal, picked in the next room this browser hosts
route();
setupPwa();
