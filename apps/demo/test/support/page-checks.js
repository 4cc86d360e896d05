// Functions the Chromium tests run inside the page (page.evaluate sends their
// source, so each stands alone). Plain JavaScript: the demo's TypeScript
// setup has no DOM types.

/** The streamed part of `answer` the live block shows, once it is past 60 characters and not yet an entry. */
export function streamingPartial(answer) {
  const text = document.querySelector(".streaming-text")?.textContent ?? "";
  const stored = document.querySelector("#transcript")?.textContent ?? "";
  return text.startsWith("2 + 3") &&
    text.length > 60 &&
    text.length < answer.length &&
    !stored.includes(answer)
    ? text
    : false;
}

/** The reasoning the live block shows while it streams, once some of `reasoning` is there. */
export function streamingReasoning(reasoning) {
  const details = document.querySelector("#live details.reasoning");
  const text = details?.querySelector("p")?.textContent ?? "";
  return details?.open && !details.hidden && text.length > 0 && reasoning.startsWith(text)
    ? text
    : false;
}

/** The focused element's tag and first line of text, and its outline. */
export function focusedElement() {
  const el = document.activeElement;
  const style = getComputedStyle(el);
  const label = (el.innerText || el.getAttribute("aria-label") || "").split("\n")[0];
  return {
    name: `${el.tagName.toLowerCase()}: ${label}`,
    outline: `${style.outlineStyle} ${style.outlineWidth}`,
  };
}

/**
 * Every visible element with text of its own whose colour has less than
 * 4.5:1 contrast (WCAG AA for normal text) against the nearest opaque
 * background behind it: "TAG.class: ratio". Disabled controls are exempt.
 */
export function lowContrastText() {
  const rgb = (color) => (color.match(/[\d.]+/g) ?? []).map(Number);
  const lum = (c) => {
    const [r, g, b] = c.map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c[3] ?? 1) > 0) return c;
    }
    return [255, 255, 255];
  };
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.offsetParent === null || el.disabled) continue;
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))].sort(
      (x, y) => y - x,
    );
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) out.push(`${el.tagName}.${el.className}: ${ratio.toFixed(2)}`);
  }
  return out;
}
