import type { EntryId, SubmissionId } from "../domain/ids.js";
import type { Json, JsonObject } from "../domain/json.js";
import type { ContentPart, EntryRecord, SubmissionRecord } from "../domain/records.js";
import { COMPACTION_ENTRY } from "./compaction.js";
import { ASSISTANT_ENTRY, TOOL_RESULT_ENTRY } from "./entries.js";
import type { LiveState } from "./live.js";

/**
 * What `conversation.stream()` yields, in order: text and reasoning as it
 * streams (before it is stored), a tool call once it is stored (with its
 * task), the tool's output as it streams, its result once stored, a retry
 * wait, a compaction, and (with `until`) the settled submission last.
 */
export type ConversationEvent =
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string }
  | { type: "toolCall"; toolCallId: string; name: string; arguments: JsonObject }
  | { type: "toolOutput"; toolCallId: string; delta: string }
  | {
      type: "toolResult";
      toolCallId: string;
      name: string;
      content: string | ContentPart[];
      isError: boolean;
      details?: Json;
    }
  | {
      type: "retry";
      attempt: number;
      maxAttempts: number;
      retryAt: number;
      error: { message: string; code?: string; kind?: string };
    }
  | { type: "compaction"; entryId: EntryId; summary: string }
  | { type: "settled"; submission: SubmissionRecord };

/** What a frame of the conversation holds, as far as events need it. */
export interface StreamView {
  readonly entries: readonly EntryRecord[];
  readonly live: Readonly<LiveState>;
}

/**
 * Turns successive views of a conversation into events, each exactly once:
 * text already shown from `live` is not repeated when the assistant entry
 * arrives (only what was not shown yet, say after frames collapsed), tool
 * output is followed by position (cut output is skipped, never repeated).
 * With `until`, only the run answering that submission counts.
 */
export class StreamEvents {
  private since: number | undefined;
  private readonly seen = new Set<number>();
  private runTask: number | undefined;
  private readonly calls = new Set<string>();
  private generation: { key: string; text: string; reasoning: string } | undefined;
  private readonly output = new Map<string, { attempt: number; at: number }>();
  private readonly retries = new Set<string>();

  constructor(private readonly until?: { id: SubmissionId }) {}

  /** Learns the run's generation task once known (from `live.run`, or the answer entry). */
  learnRun(taskId: number): void {
    this.runTask ??= taskId;
  }

  private mine(taskId: number): boolean {
    return this.until === undefined || taskId === this.runTask;
  }

  process(view: StreamView): ConversationEvent[] {
    const out: ConversationEvent[] = [];
    const { live } = view;
    if (this.until !== undefined && live.run?.submissionId === this.until.id)
      this.learnRun(live.run.taskId);
    // History before the stream started is not replayed; with `until`, the run's entries are
    // (all of them have ids above its generation task's, minted when the input was placed).
    if (this.until === undefined) this.since ??= view.entries.at(-1)?.id ?? 0;
    else if (this.runTask !== undefined) this.since = this.runTask;
    if (this.since !== undefined)
      for (const entry of view.entries) {
        if (entry.id <= this.since || this.seen.has(entry.id)) continue;
        this.seen.add(entry.id);
        this.entry(entry, out);
      }
    const retry = live.retry;
    if (retry && this.mine(retry.taskId) && !this.retries.has(`${retry.taskId}:${retry.attempt}`)) {
      this.retries.add(`${retry.taskId}:${retry.attempt}`);
      const { attempt, maxAttempts, retryAt, error } = retry;
      out.push({ type: "retry", attempt, maxAttempts, retryAt, error: { ...error } });
    }
    const g = live.generation;
    if (g && this.mine(g.taskId)) {
      const key = `${g.taskId}:${g.attempt ?? 1}`;
      if (this.generation?.key !== key) this.generation = { key, text: "", reasoning: "" };
      const shown = this.generation;
      const reasoning = g.reasoning ?? "";
      if (reasoning.length > shown.reasoning.length && reasoning.startsWith(shown.reasoning))
        out.push({ type: "reasoning", delta: reasoning.slice(shown.reasoning.length) });
      shown.reasoning = reasoning;
      if (g.text.length > shown.text.length && g.text.startsWith(shown.text))
        out.push({ type: "text", delta: g.text.slice(shown.text.length) });
      shown.text = g.text;
    }
    for (const slot of Object.values(live.tools)) {
      if (this.until !== undefined && !this.calls.has(slot.toolCallId)) continue;
      const cut = slot.outputCut?.chars ?? 0;
      let state = this.output.get(slot.toolCallId);
      if (!state || state.attempt !== slot.attempt) {
        state = { attempt: slot.attempt, at: 0 };
        this.output.set(slot.toolCallId, state);
      }
      const end = cut + slot.output.length;
      if (end <= state.at) continue;
      out.push({
        type: "toolOutput",
        toolCallId: slot.toolCallId,
        delta: slot.output.slice(Math.max(0, state.at - cut)),
      });
      state.at = end;
    }
    return out;
  }

  private entry(entry: EntryRecord, out: ConversationEvent[]): void {
    if (entry.kind === ASSISTANT_ENTRY) {
      if (entry.byTaskId === undefined || !this.mine(entry.byTaskId)) return;
      const message = entry.model?.[0];
      if (message?.role !== "assistant") return;
      // What the live view showed of this round is not repeated; the rest (if frames collapsed) is.
      const shown = this.generation?.key.startsWith(`${entry.byTaskId}:`)
        ? this.generation
        : undefined;
      const text = message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
      const reasoning = message.content.map((p) => (p.type === "reasoning" ? p.text : "")).join("");
      const seenReasoning =
        shown && reasoning.startsWith(shown.reasoning) ? shown.reasoning.length : 0;
      if (reasoning.length > seenReasoning)
        out.push({ type: "reasoning", delta: reasoning.slice(seenReasoning) });
      const seenText = shown && text.startsWith(shown.text) ? shown.text.length : 0;
      if (text.length > seenText) out.push({ type: "text", delta: text.slice(seenText) });
      this.generation = undefined;
      for (const part of message.content)
        if (part.type === "toolCall") {
          this.calls.add(part.id);
          out.push({
            type: "toolCall",
            toolCallId: part.id,
            name: part.name,
            arguments: part.arguments,
          });
        }
      return;
    }
    if (entry.kind === TOOL_RESULT_ENTRY) {
      const message = entry.model?.[0];
      if (message?.role !== "toolResult") return;
      if (this.until !== undefined && !this.calls.has(message.toolCallId)) return;
      const details = (entry.data as { details?: Json } | undefined)?.details;
      out.push({
        type: "toolResult",
        toolCallId: message.toolCallId,
        name: message.toolName,
        content: message.content,
        isError: message.isError,
        ...(details !== undefined ? { details } : {}),
      });
      return;
    }
    if (entry.kind === COMPACTION_ENTRY) {
      const summary = (entry.data as { summary?: unknown } | undefined)?.summary;
      out.push({
        type: "compaction",
        entryId: entry.id,
        summary: typeof summary === "string" ? summary : "",
      });
    }
  }
}
