// Choice dialogs on a <dialog> opened non-modally over a scrim: focus is kept inside (Tab wraps),
// Esc cancels where cancelling is allowed, and focus goes back where it was on close. Not
// showModal(): making the rest of the page inert restyled every element of the table on opening
// and again on closing (90-150 ms each on a slow phone, in the patch that asked the roulette's colour).
import { cardFace, cardName, COLORS, colorName } from "./cards.js";
import { S, name, secondsLeft } from "./core.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

let current = null; // {el, resolve, key, back}

function dialogEl() {
  let el = document.getElementById("dlg");
  if (!el) {
    // the scrim stands in for ::backdrop: it dims the page and takes the taps meant for it
    document.body.append(h("div#dlg-scrim.dlg-scrim", { hidden: true, "aria-hidden": "true" }));
    el = h("dialog#dlg.dlg", { "aria-modal": "true", "aria-labelledby": "dlg-title", "aria-describedby": "dlg-desc",
      onkeydown: onDialogKey });
    document.body.append(el);
  }
  return el;
}

function onDialogKey(e) {
  if (e.key === "Escape") {
    e.preventDefault();
    if (current?.cancel) closeDialog(null);
  } else if (e.key === "Tab") {
    const items = [...e.currentTarget.querySelectorAll("button:not([disabled])")];
    if (!items.length) return;
    const at = items.indexOf(document.activeElement);
    const next = e.shiftKey ? (at <= 0 ? items.length - 1 : at - 1) : (at + 1) % items.length;
    e.preventDefault();
    items[next].focus();
  }
}

export function dialogKey() {
  return current ? current.key : null;
}

export function closeDialog(value = null) {
  if (!current) return;
  const { el, resolve, back } = current;
  current = null;
  const hadFocus = el.contains(document.activeElement);
  if (el.open) el.close();
  el.replaceChildren();
  document.getElementById("dlg-scrim").hidden = true;
  if (hadFocus && back?.isConnected && !back.hidden) back.focus({ preventScroll: true });
  resolve(value);
}

/**
 * Open a dialog. spec: {key, title, desc, kind, options: [{value, label, render(), class}],
 * cancel: label|null, deadline, later}. Resolves with the chosen value, or null when cancelled.
 * `later`: opened from a patch, the focus moves in with the next frame (see below).
 */
export function openDialog(spec) {
  closeDialog(null);
  const el = dialogEl();
  el.className = `dlg dlg-${spec.kind || "choice"}`;
  const body = h("div.dlg-body");
  body.append(h("h2#dlg-title.dlg-title", spec.title));
  const desc = h("p#dlg-desc.dlg-desc", spec.desc || "");
  body.append(desc);
  if (spec.deadline) {
    const timer = h("p.dlg-timer", { "data-deadline": spec.deadline, "data-fmt": "dlg.choice.timer" },
      t("dlg.choice.timer", { s: secondsLeft(spec.deadline) }));
    body.append(timer);
  }
  const list = h("div.dlg-options", { role: "group", "aria-labelledby": "dlg-title" });
  for (const opt of spec.options) {
    const btn = h("button.dlg-option", { type: "button", class: opt.class || "", "data-value": opt.value,
      "aria-label": opt.label, onclick: () => closeDialog(opt.value) });
    const content = opt.render ? opt.render() : opt.label;
    if (Array.isArray(content)) btn.append(...content);
    else btn.append(content);
    list.append(btn);
  }
  body.append(list);
  if (spec.cancel) {
    body.append(h("div.dlg-actions", h("button.btn.ghost.dlg-cancel", { type: "button", onclick: () => closeDialog(null) }, spec.cancel)));
  }
  el.replaceChildren(body);
  return new Promise((resolve) => {
    const back = document.activeElement !== document.body ? document.activeElement : null;
    const mine = { el, resolve, key: spec.key || null, cancel: !!spec.cancel, back };
    current = mine;
    document.getElementById("dlg-scrim").hidden = false;
    const first = el.querySelector(".dlg-option");
    if (!spec.later) {
      el.show();
      first?.focus({ preventScroll: true });
      return;
    }
    // -- speed: show() moves the focus into the dialog at once, and so styles and lays out the
    // page there and then: in a patch's task (a choice the server asks) that pass came on top of
    // the patch's own, 15-19 ms of a slow phone's time. Opened by its attribute, the dialog is
    // styled and laid out with the next frame, and takes the focus as that frame begins
    el.setAttribute("open", "");
    requestAnimationFrame(() => {
      if (current === mine && !el.contains(document.activeElement)) first?.focus({ preventScroll: true });
    });
  });
}

export function askColor({ key, card, cancel = true, title, desc, deadline, later = false }) {
  return openDialog({
    key, kind: "color", deadline, later,
    title: title || t("dlg.color.title"),
    desc: desc || (card ? t("dlg.color.for", { card: cardName(card) }) : ""),
    cancel: cancel ? t("dlg.color.cancel") : null,
    options: COLORS.map((c) => ({
      value: c, label: colorName(c), class: `opt-color oc-${c[0]}`,
      render: () => [h("span.oc-swatch", { "aria-hidden": "true" }, t(`letter.${c[0]}`)), h("span.oc-name", colorName(c))],
    })),
  });
}

export function askTarget({ key, targets, deadline, cancel = true, later = false }) {
  const players = S.view.players;
  return openDialog({
    key, kind: "target", deadline, later,
    title: t("dlg.target.title"),
    desc: t("dlg.target.d"),
    cancel: cancel ? t("dlg.color.cancel") : null,
    options: targets.map((id) => {
      const p = players.find((x) => x.id === id);
      const n = p ? p.cards : 0;
      const self = id === S.you;
      const count = t("table.cards", { n });  // "1 card" through the key's .one form
      const label = self ? t("dlg.target.keep") : `${name(id)}, ${count}`;
      return {
        value: id, label, class: self ? "opt-target keep" : "opt-target",
        render: () => [h("span.ot-name", self ? t("dlg.target.keep") : name(id)),
          h("span.ot-count", { "aria-hidden": "true" }, count)],
      };
    }),
  });
}

export function askTop({ key, cards, deadline, later = false }) {
  return openDialog({
    key, kind: "top", deadline, later,
    title: t("dlg.top.title"),
    desc: t("dlg.top.d"),
    cancel: t("dlg.color.cancel"),
    options: cards.map((c) => ({ value: c, label: cardName(c), class: "opt-card", render: () => cardFace(c, { size: "md" }) })),
  });
}
