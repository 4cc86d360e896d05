// The decision box of a tool call waiting for approval: what it asks, an
// Approve button, a Deny button with an optional reason. A click posts the
// decision (with a request id made for that click, so a retry is the same
// decision); the run then goes on and the page updates through its event
// stream. A refusal (already decided, not this viewer's run) is shown in
// the box as the server worded it.

import { h } from "./dom.js";

let boxes = 0;

/**
 * `decide(toolCallId, { approved, reason? })` returns a promise that
 * rejects with the server's message. `canDecide` is false when another
 * program started the run: the viewer shows the call as stored.
 */
export function approvalBox(part, approval, { decide, canDecide }) {
  const n = ++boxes;
  const message = h("p", { class: "approval-message", role: "alert" });
  const children = [
    h(
      "p",
      { class: "approval-ask" },
      h("strong", {}, `${part.name} waits for your approval`),
      ` with the arguments above. It runs only once approved; a denial tells the model why.`,
    ),
    approval?.note ? h("p", { class: "note" }, approval.note) : null,
  ];
  if (!canDecide) {
    children.push(
      h(
        "p",
        { class: "note" },
        "Another program started this run, so the viewer does not decide it: deciding here would start this viewer's scheduler, which would continue the run with the demo's scripted model.",
      ),
    );
    return h(
      "div",
      { class: "approval", role: "group", "aria-label": `Decision on ${part.name}` },
      children,
    );
  }
  const reasonId = `deny-reason-${n}`;
  const reason = h("input", {
    id: reasonId,
    type: "text",
    class: "deny-reason",
    maxlength: "2000",
    "data-focus": `reason-${part.id}`,
  });
  const approve = h(
    "button",
    { type: "button", class: "approve", "data-focus": `approve-${part.id}` },
    "Approve",
  );
  const deny = h(
    "button",
    { type: "button", class: "deny secondary", "data-focus": `deny-${part.id}` },
    "Deny",
  );
  const send = (approved) => {
    approve.disabled = true;
    deny.disabled = true;
    message.textContent = approved ? "Approving…" : "Denying…";
    const text = reason.value.trim();
    decide(part.id, { approved, ...(approved || text === "" ? {} : { reason: text }) }).then(
      () => {
        message.textContent = approved ? "Approved: the run goes on." : "Denied: the run goes on.";
      },
      (error) => {
        // The server's message starts "not decided: " (an API client reads it too).
        const text = error.message.replace(/^not decided: /, "");
        message.textContent = `Not decided: ${text}`;
        approve.disabled = false;
        deny.disabled = false;
      },
    );
  };
  approve.addEventListener("click", () => send(true));
  deny.addEventListener("click", () => send(false));
  children.push(
    h(
      "div",
      { class: "approval-actions" },
      approve,
      h("label", { for: reasonId }, "Reason for a denial (optional)"),
      reason,
      deny,
    ),
    message,
  );
  return h(
    "div",
    { class: "approval", role: "group", "aria-label": `Decision on ${part.name}` },
    children,
  );
}
