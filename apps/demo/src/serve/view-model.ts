import type { ConversationView, EntryRecord, UsageTotals } from "@durably/core";

/**
 * What the page renders, built from a `ConversationView`. Each entry becomes
 * one item that never changes once built (entries are immutable), so a
 * stream sends each item once; `live` is small and sent whole. Fields this
 * version does not know are ignored, so newer harness data (another part
 * type, another live field) shows as "other" or not at all, never as an
 * error. Only display data goes to the page: an image's bytes stay here.
 */
export type PartView =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "toolCall"; id: string; name: string; arguments: string }
  | { type: "other"; name: string };

export type MessageView =
  | { role: "user"; text: string }
  | { role: "assistant"; parts: PartView[]; stopReason: string }
  | { role: "toolResult"; toolCallId: string; toolName: string; text: string; isError: boolean }
  | { role: "other"; name: string };

export interface ItemView {
  entryId: number;
  /** The entry kind: `durably.user`, `durably.assistant`, `durably.tool-result`, or an app's own. */
  kind: string;
  /** The entry's conversation: differs from the view's in a fork (entries it sees from its parent). */
  conversationId: number;
  byTaskId?: number;
  messages: MessageView[];
  usage?: {
    inputTokens: number;
    outputTokens: number;
    cachedInputTokens?: number;
    reasoningTokens?: number;
  };
  /** Tool results: which run of the tool produced it (2 after a safe rerun). */
  attempt?: number;
  /** Tool results ended by something else than the tool: "interrupted", "aborted", "orphaned"... */
  ending?: string;
  /** An app entry's data, as JSON text. */
  data?: string;
  /** A head marker: the model's context starts at this entry. */
  head?: number;
  /** A `durably.approval` entry: a person's decision on a tool call. */
  decision?: { toolCallId: string; toolName: string; approved: boolean; reason?: string };
}

export interface LiveToolView {
  taskId: number;
  toolCallId: string;
  toolName: string;
  status: string;
  attempt: number;
  /** Streamed output so far: deferred progress. */
  output: string;
  /** Present while the call waits for a person's decision (status "approval"). */
  approval?: { arguments: string; requestedAt: number; note?: string };
}

/** Model calls and their tokens, as core's usage ledger counts them. */
export type UsageTotalsView = UsageTotals;

export interface UsageView {
  total: UsageTotalsView;
  models: ({ name: string } & UsageTotalsView)[];
}

export interface LiveView {
  run: { submissionId: number; taskId: number } | null;
  /** The answer being streamed: deferred progress, not yet a transcript entry. */
  generation: {
    taskId: number;
    text: string;
    reasoning?: string;
    toolCalls: { id: string; name: string; arguments: string }[];
    attempt?: number;
  } | null;
  /** A model call waiting to be retried (harness versions with durable retry). */
  retry?: {
    taskId: number;
    attempt: number;
    maxAttempts: number;
    retryAt: number;
    error: { message: string; code?: string; kind?: string };
  };
  tools: LiveToolView[];
  queued: { submissionId: number; content: string }[];
}

/** How much of an app entry's data the page gets. */
const DATA_CHARS = 2000;

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;

/** Compact JSON when it fits a line, indented otherwise. */
function json(value: unknown, limit = Infinity): string {
  const compact = JSON.stringify(value) ?? "";
  const text = compact.length <= 80 ? compact : (JSON.stringify(value, null, 2) ?? "");
  return text.length <= limit
    ? text
    : `${text.slice(0, limit)}… (${text.length - limit} more characters)`;
}

/** A message's content: a string, or parts (text, image) in newer harness versions. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => {
      if (!isObject(part)) return "";
      if (part.type === "text") return str(part.text);
      if (part.type === "image") {
        const bytes = Math.floor((str(part.data).length * 3) / 4);
        return `[image ${str(part.mediaType) || "of unknown type"}, about ${Math.ceil(bytes / 1024)} KiB]`;
      }
      return `[${str(part.type) || "unknown"} part]`;
    })
    .join("");
}

function partView(part: unknown): PartView {
  if (!isObject(part)) return { type: "other", name: "not an object" };
  switch (part.type) {
    case "text":
      return { type: "text", text: str(part.text) };
    case "reasoning":
      return { type: "reasoning", text: str(part.text) };
    case "toolCall":
      return {
        type: "toolCall",
        id: str(part.id),
        name: str(part.name),
        arguments: json(part.arguments ?? {}),
      };
    default:
      return { type: "other", name: str(part.type) || "unknown" };
  }
}

export function messageView(message: unknown): MessageView {
  if (!isObject(message)) return { role: "other", name: "not an object" };
  switch (message.role) {
    case "user":
      return { role: "user", text: contentText(message.content) };
    case "assistant":
      return {
        role: "assistant",
        parts: Array.isArray(message.content) ? message.content.map(partView) : [],
        stopReason: str(message.stopReason),
      };
    case "toolResult":
      return {
        role: "toolResult",
        toolCallId: str(message.toolCallId),
        toolName: str(message.toolName),
        text: contentText(message.content),
        isError: message.isError === true,
      };
    default:
      return { role: "other", name: str(message.role) || "unknown" };
  }
}

const HARNESS_KINDS = new Set(["durably.user", "durably.assistant", "durably.tool-result"]);
const ENDINGS = ["interrupted", "aborted", "orphaned", "failed", "faulted"];

export function itemView(entry: EntryRecord): ItemView {
  const item: ItemView = {
    entryId: entry.id,
    kind: entry.kind,
    conversationId: entry.conversationId,
    messages: (entry.model ?? []).map(messageView),
  };
  if (entry.byTaskId !== undefined) item.byTaskId = entry.byTaskId;
  if (entry.head !== undefined) item.head = entry.head;
  const data: unknown = entry.data;
  if (HARNESS_KINDS.has(entry.kind)) {
    if (isObject(data)) {
      const usage = data.usage;
      if (isObject(usage)) {
        const inputTokens = num(usage.inputTokens);
        const outputTokens = num(usage.outputTokens);
        if (inputTokens !== undefined && outputTokens !== undefined) {
          item.usage = { inputTokens, outputTokens };
          const cached = num(usage.cachedInputTokens);
          const reasoning = num(usage.reasoningTokens);
          if (cached !== undefined) item.usage.cachedInputTokens = cached;
          if (reasoning !== undefined) item.usage.reasoningTokens = reasoning;
        }
      }
      const attempt = num(data.attempt);
      if (attempt !== undefined) item.attempt = attempt;
      const ending = ENDINGS.find((name) => data[name] === true);
      if (ending !== undefined) item.ending = ending;
    }
  } else if (data !== undefined) {
    item.data = json(data, DATA_CHARS);
    if (entry.kind === "durably.approval" && isObject(data) && typeof data.approved === "boolean") {
      item.decision = {
        toolCallId: str(data.toolCallId),
        toolName: str(data.toolName),
        approved: data.approved,
      };
      if (typeof data.reason === "string") item.decision.reason = data.reason;
    }
  }
  return item;
}

function toolView(slot: Loose): LiveToolView {
  const tool: LiveToolView = {
    taskId: num(slot.taskId) ?? 0,
    toolCallId: str(slot.toolCallId),
    toolName: str(slot.toolName),
    status: str(slot.status),
    attempt: num(slot.attempt) ?? 0,
    output: str(slot.output),
  };
  const approval = isObject(slot.approval) ? slot.approval : undefined;
  if (approval) {
    tool.approval = {
      arguments: json(approval.arguments ?? {}),
      requestedAt: num(approval.requestedAt) ?? 0,
    };
    if (typeof approval.note === "string") tool.approval.note = approval.note;
  }
  return tool;
}

function totalsView(value: unknown): UsageTotalsView {
  const t = isObject(value) ? value : {};
  const out: UsageTotalsView = {
    requests: num(t.requests) ?? 0,
    inputTokens: num(t.inputTokens) ?? 0,
    outputTokens: num(t.outputTokens) ?? 0,
    cachedInputTokens: num(t.cachedInputTokens) ?? 0,
    reasoningTokens: num(t.reasoningTokens) ?? 0,
  };
  const cost = num(t.cost);
  const unpriced = num(t.unpriced);
  if (cost !== undefined) out.cost = cost;
  if (unpriced !== undefined && unpriced > 0) out.unpriced = unpriced;
  return out;
}

/** A usage report (`harness.usage`, a view's `usage`) as the page shows it: totals, then per model. */
export function usageView(report: unknown): UsageView {
  const r = isObject(report) ? report : {};
  const models = isObject(r.models) ? r.models : {};
  return {
    total: totalsView(r.total),
    models: Object.keys(models)
      .sort()
      .map((name) => ({ name, ...totalsView(models[name]) })),
  };
}

export function liveView(view: Pick<ConversationView, "live" | "inbox">): LiveView {
  const live = view.live as unknown as Loose;
  const run = isObject(live.run) ? live.run : null;
  const generation = isObject(live.generation) ? live.generation : null;
  const tools = isObject(live.tools) ? Object.values(live.tools).filter(isObject) : [];
  const out: LiveView = {
    run: run && { submissionId: num(run.submissionId) ?? 0, taskId: num(run.taskId) ?? 0 },
    generation: generation && {
      taskId: num(generation.taskId) ?? 0,
      text: str(generation.text),
      toolCalls: (Array.isArray(generation.toolCalls) ? generation.toolCalls : [])
        .filter(isObject)
        .map((c) => ({ id: str(c.id), name: str(c.name), arguments: json(c.arguments ?? {}) })),
    },
    tools: tools.map(toolView).sort((a, b) => a.taskId - b.taskId),
    queued: (Array.isArray(view.inbox.queued) ? view.inbox.queued : []).map((q) => ({
      submissionId: q.submissionId,
      // A queued write shows its entry kind (it has no user text).
      content: "write" in q ? `(write: ${q.write.kind})` : contentText(q.content),
    })),
  };
  if (out.generation && generation) {
    if (typeof generation.reasoning === "string" && generation.reasoning !== "")
      out.generation.reasoning = generation.reasoning;
    const attempt = num(generation.attempt);
    if (attempt !== undefined) out.generation.attempt = attempt;
  }
  const retry = isObject(live.retry) ? live.retry : undefined;
  if (retry) {
    const error = isObject(retry.error) ? retry.error : {};
    out.retry = {
      taskId: num(retry.taskId) ?? 0,
      attempt: num(retry.attempt) ?? 0,
      maxAttempts: num(retry.maxAttempts) ?? 0,
      retryAt: num(retry.retryAt) ?? 0,
      error: {
        message: str(error.message),
        ...(typeof error.code === "string" ? { code: error.code } : {}),
        ...(typeof error.kind === "string" ? { kind: error.kind } : {}),
      },
    };
  }
  return out;
}
