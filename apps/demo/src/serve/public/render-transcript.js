// Renders a conversation's state: the transcript (one list item per entry,
// rebuilt only when what it shows changed) and what runs now (the live
// block). Tool calls show their status from the stored result or the live
// slot. Streamed text and tool output are deferred progress, marked so.

import { h, fill, streamText } from "./dom.js";
import { approvalBox } from "./render-approval.js";
import { resultHasCall, toolCallStatus } from "./view-state.js";

const DEFERRED_NOTE =
  "deferred progress: shown as it arrives, stored within about a second, may be cut short by a crash";

function badge(status) {
  let text = status.status;
  if (status.status === "running") text = `running, attempt ${status.attempt || 1}`;
  if (status.status === "pending" && status.attempt > 0)
    text = `pending, to run again (attempt ${status.attempt} was cut short)`;
  if (status.status === "no result") text = "no result stored";
  if (status.status === "approval") text = "waiting for approval";
  return h("span", { class: `badge status-${status.status.replace(/\s+/g, "-")}` }, text);
}

function toolCard(state, part, ctx) {
  const status = toolCallStatus(state, part.id);
  const resultLabel =
    status.resultEntryId === undefined
      ? undefined
      : `Result, entry ${status.resultEntryId}` +
        (status.attempt > 1 ? `, from attempt ${status.attempt}` : "") +
        (status.ending ? ` (${status.ending})` : "");
  return h(
    "div",
    { class: "tool-call", "data-call": part.id },
    h(
      "p",
      { class: "tool-head" },
      h("span", { class: "tool-name" }, part.name),
      " ",
      badge(status),
    ),
    h("pre", { class: "arguments", "aria-label": `Arguments of ${part.name}` }, part.arguments),
    status.status === "approval" ? approvalBox(part, status.approval, ctx) : null,
    status.output
      ? h(
          "div",
          { class: "deferred" },
          h("p", { class: "deferred-label" }, `Output so far (${DEFERRED_NOTE})`),
          h(
            "pre",
            { class: "output", tabindex: "0", "data-focus": `output-${part.id}` },
            status.output,
          ),
        )
      : null,
    resultLabel
      ? h(
          "div",
          { class: `result${status.status === "error" ? " is-error" : ""}` },
          h("p", { class: "result-label" }, resultLabel),
          h(
            "pre",
            { class: "result-text", tabindex: "0", "data-focus": `result-${part.id}` },
            status.result,
          ),
        )
      : null,
  );
}

function reasoning(text, key) {
  return h(
    "details",
    { class: "reasoning" },
    h("summary", { "data-focus": key }, "Reasoning"),
    h("p", { class: "text" }, text),
  );
}

function assistantMessage(state, message, key, ctx) {
  const parts = (message.parts ?? []).map((part, i) => {
    switch (part.type) {
      case "text":
        return h("p", { class: "text" }, part.text);
      case "reasoning":
        return reasoning(part.text, `${key}-reasoning-${i}`);
      case "toolCall":
        return toolCard(state, part, ctx);
      default:
        return h("p", { class: "note" }, `(a ${part.name} part this viewer does not show)`);
    }
  });
  const ended =
    message.stopReason && !["stop", "toolUse"].includes(message.stopReason)
      ? h("p", { class: "ending" }, `Ended: ${message.stopReason}`)
      : null;
  return [parts, ended];
}

function usageText(usage) {
  const details = [];
  if (usage.cachedInputTokens) details.push(`${usage.cachedInputTokens} of the input cached`);
  if (usage.reasoningTokens) details.push(`${usage.reasoningTokens} of the output reasoning`);
  return (
    `${usage.inputTokens} tokens in, ${usage.outputTokens} out` +
    (details.length > 0 ? ` (${details.join(", ")})` : "")
  );
}

const LABELS = { user: "User", assistant: "Assistant", toolResult: "Tool result" };
const KIND_LABELS = { "durably.approval": "Decision" };

function messageBody(state, item, message, i, ctx) {
  switch (message.role) {
    case "user":
      return h("p", { class: "text" }, message.text);
    case "assistant":
      return assistantMessage(state, message, `entry-${item.entryId}-${i}`, ctx);
    case "toolResult":
      return [
        h("p", { class: "note" }, `${message.toolName} (call ${message.toolCallId})`),
        h("pre", { class: "result-text", tabindex: "0" }, message.text),
      ];
    default:
      return h("p", { class: "note" }, `(a "${message.name}" message this viewer does not show)`);
  }
}

function renderItem(state, item, ctx) {
  const role = item.messages?.[0]?.role;
  const label = LABELS[role] ?? KIND_LABELS[item.kind] ?? item.kind;
  const from =
    item.conversationId !== state.conversationId
      ? ` · from conversation ${item.conversationId}`
      : "";
  return h(
    "li",
    { class: `item role-${role ?? "entry"}`, id: `entry-${item.entryId}` },
    h(
      "p",
      { class: "meta" },
      h("span", { class: "who" }, label),
      h("span", { class: "entry-id" }, ` · entry ${item.entryId}${from}`),
      item.head !== undefined
        ? h("span", { class: "entry-id" }, ` · context starts at ${item.head}`)
        : null,
    ),
    (item.messages ?? []).map((message, i) => messageBody(state, item, message, i, ctx)),
    item.usage ? h("p", { class: "usage" }, usageText(item.usage)) : null,
    item.decision
      ? h(
          "p",
          { class: "decision" },
          `${item.decision.approved ? "Approved" : "Denied"} ${item.decision.toolName} (call ${item.decision.toolCallId})` +
            (item.decision.reason ? `: ${item.decision.reason}` : "") +
            ".",
        )
      : item.data !== undefined
        ? h("pre", { class: "data", tabindex: "0" }, item.data)
        : null,
  );
}

/**
 * What an item's rendering depends on besides the item: the status of its
 * tool calls (and, while one waits for approval, whether this viewer may decide).
 */
function signature(state, item, ctx) {
  const calls = [];
  for (const message of item.messages ?? [])
    for (const part of message.parts ?? [])
      if (part.type === "toolCall") calls.push(toolCallStatus(state, part.id));
  if (calls.some((c) => c.status === "approval")) calls.push({ canDecide: ctx.canDecide });
  return calls.length === 0 ? "" : JSON.stringify(calls);
}

/** Puts focus back on the element that had it when a rebuild replaced it. */
function keepFocus(container, rebuild) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.getAttribute("data-focus") : null;
  rebuild();
  if (key && !container.contains(active)) {
    const again = container.querySelector(`[data-focus="${CSS.escape(key)}"]`);
    if (again instanceof HTMLElement) again.focus();
  }
}

export class TranscriptView {
  constructor(list, live) {
    this.list = list;
    this.live = live;
    this.rendered = new Map(); // entryId -> { element, signature }
    this.conversationId = 0;
    this.parts = null; // the live block's elements, made once and updated in place
  }

  /** `context`: { runsHere, canDecide, decide(toolCallId, decision) } */
  render(state, context) {
    keepFocus(this.list, () => this.#renderItems(state, context));
    this.#renderLive(state, context);
  }

  #renderItems(state, ctx) {
    if (state.conversationId !== this.conversationId) {
      this.list.replaceChildren();
      this.rendered.clear();
      this.conversationId = state.conversationId;
    }
    for (const item of state.items) {
      if (resultHasCall(state, item)) continue; // shown in its call's card
      const sig = signature(state, item, ctx);
      const done = this.rendered.get(item.entryId);
      if (done && done.signature === sig) continue;
      const element = renderItem(state, item, ctx);
      if (done) done.element.replaceWith(element);
      else this.list.append(element);
      this.rendered.set(item.entryId, { element, signature: sig });
    }
  }

  #skeleton() {
    if (this.parts) return this.parts;
    const parts = {
      run: h("p", { class: "run" }),
      retry: h("p", { class: "retry" }),
      generation: h("article", { class: "streaming", "aria-labelledby": "streaming-label" }),
      label: h("p", { class: "deferred-label", id: "streaming-label" }),
      // Open while it streams; a reader who closes it keeps it closed (the element stays).
      reasoning: h(
        "details",
        { class: "reasoning", open: true },
        h("summary", { "data-focus": "live-reasoning" }, "Reasoning so far"),
      ),
      reasoningText: h("p", { class: "text" }),
      // Polite and additions-only: a screen reader reads the new words as they stream.
      text: h("p", {
        class: "text streaming-text",
        "aria-live": "polite",
        "aria-relevant": "additions text",
      }),
      calls: h("div", { class: "calls" }),
      queued: h("div", { class: "queued" }),
    };
    parts.reasoning.append(parts.reasoningText);
    parts.generation.append(parts.label, parts.reasoning, parts.text, parts.calls);
    this.live.append(
      h("h3", { id: "live-heading" }, "Running now"),
      parts.run,
      parts.retry,
      parts.generation,
      parts.queued,
    );
    this.parts = parts;
    return parts;
  }

  /** The retry line, with a countdown that ticks until the retry starts or goes away. */
  #showRetry(retry) {
    const element = this.parts.retry;
    element.hidden = !retry;
    clearInterval(this.retryTimer);
    this.retryTimer = undefined;
    if (!retry) return;
    const show = () => {
      const seconds = Math.max(0, Math.ceil((retry.retryAt - Date.now()) / 1000));
      const error = retry.error ?? {};
      element.textContent =
        `Retrying the model call: attempt ${retry.attempt} of ${retry.maxAttempts}, ${seconds > 0 ? `in ${seconds} s` : "now"}.` +
        (error.message
          ? ` The previous try failed: ${error.message}${error.code ? ` (${error.code})` : ""}.`
          : "");
    };
    show();
    this.retryTimer = setInterval(show, 500);
  }

  #renderLive(state, context) {
    const live = state.live;
    const queued = live?.queued ?? [];
    const busy = live && (live.run || live.generation || live.retry || queued.length > 0);
    this.live.hidden = !busy;
    if (!busy) {
      if (this.parts) this.#showRetry(undefined);
      return;
    }
    const parts = this.#skeleton();
    parts.run.hidden = !live.run;
    if (live.run)
      parts.run.textContent =
        `Answering submission ${live.run.submissionId} (generation task ${live.run.taskId}).` +
        (context.runsHere
          ? ""
          : " Nothing runs it here: another program started it, so this is its state as stored.");
    this.#showRetry(live.retry);
    const generation = live.generation;
    parts.generation.hidden = !generation;
    if (generation) {
      parts.label.textContent = `Assistant, streaming${generation.attempt > 1 ? ` (attempt ${generation.attempt})` : ""} — ${DEFERRED_NOTE}; a transcript entry once the turn ends`;
      parts.reasoning.hidden = !generation.reasoning;
      streamText(parts.reasoningText, generation.reasoning ?? "");
      streamText(parts.text, generation.text);
      fill(
        parts.calls,
        (generation.toolCalls ?? []).map((call) =>
          h("p", { class: "note" }, `Calling ${call.name} ${call.arguments}`),
        ),
      );
    } else {
      streamText(parts.text, "");
      streamText(parts.reasoningText, "");
    }
    parts.queued.hidden = queued.length === 0;
    fill(
      parts.queued,
      queued.length > 0 ? h("p", {}, "Queued, answered after this one:") : null,
      queued.length > 0
        ? h(
            "ul",
            {},
            queued.map((q) => h("li", {}, `submission ${q.submissionId}: ${q.content}`)),
          )
        : null,
    );
  }
}
