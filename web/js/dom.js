// h("button.primary", {onclick, "aria-label": "…"}, "text", child…): a tiny element builder.

export function h(tag, attrs, ...children) {
  const [head, ...classes] = tag.split(".");
  const [name, id] = head.split("#");
  const el = document.createElement(name || "div");
  if (id) el.id = id;
  if (classes.length) el.className = classes.join(" ");
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") el.className = [el.className, v].filter(Boolean).join(" ");
      else if (k === "style" && typeof v === "object") {
        // custom properties ("--hue") only through setProperty: Object.assign drops them
        for (const [prop, val] of Object.entries(v)) {
          if (prop.startsWith("--")) el.style.setProperty(prop, val);
          else el.style[prop] = val;
        }
      }
      else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else if (k === "html") el.innerHTML = v;
      else if (k in el && !k.includes("-") && k !== "list" && k !== "form") el[k] = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// each icon's markup parsed once, then cloned: parsing it again for every card of a hand was a good
// part of a patch's JavaScript on a slow phone
const parsed = new Map();

export function svg(markup, cls = "icon") {
  let icon = parsed.get(markup);
  if (!icon) {
    const tpl = document.createElement("template");
    tpl.innerHTML = markup;
    icon = tpl.content;
    parsed.set(markup, icon);
  }
  const span = document.createElement("span");
  span.className = cls;
  span.setAttribute("aria-hidden", "true");
  span.append(icon.cloneNode(true));
  return span;
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Show or hide an element. A focused one is let go of first: hiding (or removing) the focused
 * element made the browser lay the page out there and then, in the middle of a patch. */
export function setHidden(el, hidden) {
  if (hidden && el === document.activeElement) el.blur();
  el.hidden = hidden;
}

/** Remove an element, let go of first when focused (see setHidden). */
export function removeEl(el) {
  if (el.contains(document.activeElement)) document.activeElement.blur();
  el.remove();
}

/** Text and attributes written only when they differ: the same words written again are a new text
 * node for the browser to style and lay out, and an attribute set again re-checks the styles that
 * name it, on every patch. */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

export function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

/** A button in `root` that took the focus from a tap or a click (not the keyboard) lets go of it
 * before a patch changes the page: letting go later, when the patch hides or removes it, made the
 * browser style and lay out the half-changed page there and then (a keyboard's focus is kept:
 * view.js moves it on). */
export function releasePointerFocus(root) {
  const el = document.activeElement;
  if (root && el && el.tagName === "BUTTON" && root.contains(el) && !el.matches(":focus-visible")) el.blur();
}
