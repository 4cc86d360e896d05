// The page's model of one conversation, built from the server's events
// (`snapshot`, `change`) and nothing else. Pure functions over plain data,
// so they run in Node tests too. Unknown fields are ignored: a newer server
// can send more than this page shows.

/** A conversation's state: its items by entry id (ascending), the live state, and where results are. */
export function emptyState() {
  return {
    conversationId: 0,
    items: [],
    live: null,
    usage: null,
    results: new Map(),
    calls: new Set(),
    received: 0,
  };
}

function index(state, items) {
  for (const item of items)
    for (const message of item.messages ?? []) {
      if (message.role === "toolResult" && message.toolCallId)
        state.results.set(message.toolCallId, { item, message });
      if (message.role === "assistant")
        for (const part of message.parts ?? [])
          if (part.type === "toolCall" && part.id) state.calls.add(part.id);
    }
}

/** Replaces everything (the first event, or after the stream lost track). */
export function applySnapshot(state, data) {
  const next = emptyState();
  next.conversationId = data.conversationId;
  next.items = [...(data.items ?? [])];
  next.live = data.live ?? null;
  next.usage = data.usage ?? null;
  next.received = state.received + 1;
  index(next, next.items);
  return next;
}

/** Appends new items (each entry arrives once) and takes the new live state when one came. */
export function applyChange(state, data) {
  const known = new Set(state.items.map((item) => item.entryId));
  const fresh = (data.items ?? []).filter((item) => !known.has(item.entryId));
  const next = {
    ...state,
    items: fresh.length > 0 ? [...state.items, ...fresh] : state.items,
    live: "live" in data ? data.live : state.live,
    usage: "usage" in data ? data.usage : state.usage,
    results: state.results,
    calls: state.calls,
    received: state.received + 1,
  };
  if (fresh.length > 0) {
    next.results = new Map(state.results);
    next.calls = new Set(state.calls);
    index(next, fresh);
  }
  return next;
}

/**
 * Where a tool call stands: its stored result ("done" or "error"), else its
 * live slot ("approval" while it waits for a person's decision, with what it
 * asks; "pending", "running", with the output streamed so far), else
 * "no result" (none stored and nothing running it, e.g. a fork cut before).
 */
export function toolCallStatus(state, callId) {
  const result = state.results.get(callId);
  if (result) {
    return {
      status: result.message.isError ? "error" : "done",
      resultEntryId: result.item.entryId,
      result: result.message.text,
      attempt: result.item.attempt,
      ending: result.item.ending,
    };
  }
  const slot = (state.live?.tools ?? []).find((tool) => tool.toolCallId === callId);
  if (slot)
    return {
      status: slot.status || "pending",
      attempt: slot.attempt,
      output: slot.output,
      ...(slot.approval ? { approval: slot.approval } : {}),
    };
  return { status: "no result" };
}

/** True when a tool-result item is shown inside its call (so it needs no row of its own). */
export function resultHasCall(state, item) {
  const message = (item.messages ?? [])[0];
  return message?.role === "toolResult" && state.calls.has(message.toolCallId);
}

/** Totals as one line: "3 model calls: 120 tokens in (20 cached), 80 out (10 reasoning); cost …". */
export function usageLine(totals) {
  if (!totals || totals.requests === 0) return "no model calls yet";
  const calls = `${totals.requests} model call${totals.requests === 1 ? "" : "s"}`;
  const input = `${totals.inputTokens} tokens in${totals.cachedInputTokens ? ` (${totals.cachedInputTokens} cached)` : ""}`;
  const output = `${totals.outputTokens} out${totals.reasoningTokens ? ` (${totals.reasoningTokens} reasoning)` : ""}`;
  const unpriced = totals.unpriced ?? 0;
  let cost;
  if (totals.cost === undefined) cost = "cost not known (the model declares no prices)";
  else
    cost =
      `cost ${Number(totals.cost.toPrecision(4))} in the models' price unit` +
      (unpriced > 0 ? `, plus ${unpriced} call${unpriced === 1 ? "" : "s"} without prices` : "");
  return `${calls}: ${input}, ${output}; ${cost}`;
}
