// Renders the storage status (with what the user can do about it), the
// conversation list and the storage panel.

import { h, fill } from "./dom.js";

/**
 * The status banner. `actions` are { open(), wait(), stopWaiting(), release() }:
 * what the buttons ask the server to do.
 */
export function renderStatus(element, status, actions) {
  switch (status?.state) {
    case "open":
      return fill(
        element,
        h(
          "p",
          { class: "status-line status-open" },
          "Open: this viewer owns the storage while it has it open.",
          (status.othersUnfinished ?? []).length > 0
            ? ` Conversation ${status.othersUnfinished.join(", ")} has an unfinished run that another program started; the viewer shows it as stored and does not run it.`
            : "",
        ),
        h(
          "button",
          { type: "button", class: "secondary", onClick: actions.release },
          "Release the storage",
        ),
      );
    case "locked":
      return fill(
        element,
        h(
          "p",
          { class: "status-line status-locked" },
          h("strong", {}, "Locked: "),
          `${status.holderText} has this storage open. ${status.advice}`,
        ),
        h("p", { class: "note" }, status.message),
        status.waiting
          ? [
              h(
                "p",
                { class: "status-line" },
                "Waiting: it opens here as soon as the lock is free.",
              ),
              h(
                "button",
                { type: "button", class: "secondary", onClick: actions.stopWaiting },
                "Stop waiting",
              ),
            ]
          : [
              h("button", { type: "button", onClick: actions.wait }, "Open when the lock is free"),
              h(
                "button",
                { type: "button", class: "secondary", onClick: actions.open },
                "Try again now",
              ),
            ],
      );
    case "released":
      return fill(
        element,
        h(
          "p",
          { class: "status-line" },
          "Released: the viewer closed the storage, so another program can open it.",
        ),
        h("button", { type: "button", onClick: actions.open }, "Open it again"),
      );
    case "failed":
      return fill(
        element,
        h(
          "p",
          { class: "status-line status-failed" },
          h("strong", {}, "Cannot open: "),
          status.message,
        ),
        h("button", { type: "button", onClick: actions.open }, "Try again"),
      );
    case "opening":
      return fill(element, h("p", { class: "status-line" }, "Opening the storage…"));
    case "disconnected":
      return fill(element, h("p", { class: "status-line status-failed" }, status.message));
    default:
      return fill(element, h("p", { class: "status-line" }, "Connecting…"));
  }
}

export function renderList(element, list, selected) {
  const items = (list?.conversations ?? []).map((c) => {
    const details = [];
    if (c.parent) details.push(`fork of ${c.parent.conversationId} at entry ${c.parent.at}`);
    if (c.ownerTaskId !== undefined) details.push(`owned by task ${c.ownerTaskId}`);
    if (c.running) details.push("running");
    return h(
      "li",
      {},
      h(
        "a",
        { href: `/?c=${c.id}`, "aria-current": c.id === selected ? "page" : false },
        h("span", { class: "conversation-id" }, `Conversation ${c.id}`),
        c.title ? h("span", { class: "conversation-title" }, c.title) : null,
        details.length > 0
          ? h("span", { class: "conversation-details" }, details.join(" · "))
          : null,
      ),
    );
  });
  fill(element, items);
  if (list?.omitted > 0)
    element.append(h("li", { class: "note" }, `${list.omitted} older not listed`));
}

/** Long values wrap anywhere (JSON has few spaces); short ones stay on one line. */
function cell(value) {
  return h("td", { class: value.length > 24 ? "long" : false }, value);
}

function tableSection(section) {
  return h(
    "table",
    {},
    h("caption", {}, section.title),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        section.columns.map((c) => h("th", { scope: "col" }, c)),
      ),
    ),
    h(
      "tbody",
      {},
      section.rows.length === 0
        ? h("tr", {}, h("td", { colspan: section.columns.length, class: "note" }, "(no rows)"))
        : section.rows.map((row) =>
            h(
              "tr",
              {},
              row.map((value) => cell(value)),
            ),
          ),
    ),
  );
}

function linesSection(section) {
  return h(
    "table",
    {},
    h("caption", {}, section.title),
    h(
      "thead",
      {},
      h("tr", {}, h("th", { scope: "col" }, "line"), h("th", { scope: "col" }, "text")),
    ),
    h(
      "tbody",
      {},
      section.lines.length === 0
        ? h("tr", {}, h("td", { colspan: 2, class: "note" }, "(no lines)"))
        : section.lines.map((line) =>
            h("tr", {}, h("td", { class: "line-number" }, line.n ?? "…"), cell(line.text)),
          ),
    ),
  );
}

export function renderPanel(summary, sections, panel) {
  if (!panel) {
    fill(summary, "Open a conversation to see what the storage holds behind it.");
    fill(sections);
    return;
  }
  fill(summary, panel.summary);
  fill(
    sections,
    panel.sections.map((section) =>
      h(
        "div",
        { class: "panel-section", tabindex: "0", role: "group", "aria-label": section.title },
        section.type === "table" ? tableSection(section) : linesSection(section),
        section.omitted > 0
          ? h("p", { class: "note" }, `${section.omitted} older not shown`)
          : null,
      ),
    ),
  );
}
