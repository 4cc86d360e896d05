// A small element builder: text always goes in as text nodes, never as HTML,
// so nothing stored can inject markup into the page.

/**
 * h("p", { class: "note", "aria-label": "…" }, "text", childElement)
 * Props: `class`, `text`, `on<Event>` handlers, boolean attributes as true/false, others as strings.
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") element.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function")
      element.addEventListener(key.slice(2).toLowerCase(), value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Replaces an element's children. */
export function fill(element, ...children) {
  element.replaceChildren();
  for (const child of children.flat(Infinity))
    if (child !== undefined && child !== null && child !== false)
      element.append(child instanceof Node ? child : document.createTextNode(String(child)));
}

const shownText = new WeakMap();

/**
 * Shows `text` in `element`, appending only what was added when the new
 * text extends the old: an aria-live region then announces the new words
 * instead of the whole answer again.
 */
export function streamText(element, text) {
  const shown = shownText.get(element) ?? "";
  if (text === shown) return;
  if (shown !== "" && text.startsWith(shown))
    element.append(document.createTextNode(text.slice(shown.length)));
  else element.textContent = text;
  shownText.set(element, text);
}
