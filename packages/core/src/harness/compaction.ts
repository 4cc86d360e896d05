import type { ConversationId, EntryId, TaskId } from "../domain/ids.js";
import type { JsonObject } from "../domain/json.js";
import type { EntryRecord, Message } from "../domain/records.js";
import type { AppendEntryInput } from "../session/transaction.js";
import { contentText } from "./content.js";
import { deriveContext } from "./context.js";
import { usageData } from "./entries.js";
import type { ModelRequest, ModelSettings, ModelUsage } from "./model.js";

/** The entry kind of a compaction: a head marker holding the summary. */
export const COMPACTION_ENTRY = "durably.compaction";

/** The `system` of a summary request (a model server may recognise one by it). */
export const COMPACTION_INSTRUCTIONS =
  "You write the working memory of an AI assistant. You are given the start of a conversation between a user and the assistant, as a transcript. Write a summary that lets the assistant carry on the conversation without the transcript. Do not answer the user and do not continue the conversation: only write the summary.";

const COMPACTION_REQUEST = `Summarise the transcript above. If it starts with an earlier summary, keep what still matters from it and add the newer messages. Keep:
- what the user wants, and every constraint or preference they stated;
- what was done, what was decided and why, and what is still open;
- exact names, paths, numbers, identifiers and error messages the rest of the work needs.
Write plain prose or short lists; no preamble.`;

/** What the model sees before a summary: says what it is. */
export const SUMMARY_PREFIX =
  "The earlier part of this conversation was replaced by this summary of it:\n\n";

/** How much of one tool result a summary request shows. */
const RESULT_CHARS = 2_000;

/** Why a compaction runs. */
export type CompactionReason = "manual" | "threshold" | "overflow";

/** What a compaction keeps and what it summarises, chosen from the conversation's context. */
export interface CompactionPlan {
  /** The first entry kept as it is: the marker's `head`. */
  readonly firstKept: EntryId;
  /** What the summary replaces, as the model saw it (an earlier summary first). */
  readonly summarized: readonly Message[];
  /** The entries summarised (the earlier marker, if any, counts as one). */
  readonly entries: number;
}

/** Whether an entry starts a turn: its first message is the user's, and it is not a marker. */
const startsTurn = (entry: EntryRecord): boolean =>
  entry.head === undefined && entry.model?.[0]?.role === "user";

/**
 * Picks the cut for a compaction of `entries` (the context window as
 * `loadContextEntries` scans it: from the newest marker's `head` on) that
 * keeps the last `keepLastTurns` turns (a turn starts at a user message)
 * as they are and summarises what the model sees before them; or, given
 * `firstKept`, the cut chosen earlier (a compaction resumed after a crash
 * summarises exactly what it chose). `undefined` when there is nothing to
 * compact: not more turns than kept, or the chosen entry is no longer in
 * the context (a newer marker moved past it).
 */
export function planCompaction(
  entries: readonly EntryRecord[],
  cut: { keepLastTurns: number } | { firstKept: EntryId },
): CompactionPlan | undefined {
  let marker: EntryRecord | undefined;
  for (const entry of entries)
    if (entry.head !== undefined && (!marker || entry.id > marker.id)) marker = entry;
  const start = marker?.head ?? 0;
  const window = entries.filter((e) => e.id >= start && e.head === undefined);
  let firstKept: EntryId;
  if ("firstKept" in cut) {
    if (!window.some((e) => e.id === cut.firstKept && startsTurn(e))) return undefined;
    firstKept = cut.firstKept;
  } else {
    const turns = window.filter(startsTurn);
    if (turns.length <= cut.keepLastTurns) return undefined;
    firstKept = (turns[turns.length - cut.keepLastTurns] as EntryRecord).id;
  }
  const before = window.filter((e) => e.id < firstKept);
  const summarized = deriveContext(marker ? [...before, marker] : before);
  if (before.length === 0 || summarized.length === 0) return undefined;
  return { firstKept, summarized, entries: before.length + (marker ? 1 : 0) };
}

function shorten(text: string, max: number): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

/** Messages as a plain transcript, so the summariser reads them instead of continuing them. */
export function transcriptText(messages: readonly Message[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.role === "user") lines.push(`[user]: ${contentText(m.content)}`);
    else if (m.role === "toolResult")
      lines.push(
        `[tool result of ${m.toolName}${m.isError ? ", an error" : ""}]: ${shorten(contentText(m.content), RESULT_CHARS)}`,
      );
    else
      for (const part of m.content) {
        if (part.type === "text") lines.push(`[assistant]: ${part.text}`);
        else if (part.type === "toolCall")
          lines.push(`[assistant called ${part.name}]: ${JSON.stringify(part.arguments)}`);
        // Reasoning is the model's scratch work: not part of what it told the user.
      }
  }
  return lines.join("\n\n");
}

/** The summary request for a plan. */
export function summaryRequest(
  plan: CompactionPlan,
  conversationId: ConversationId,
  settings: ModelSettings | undefined,
): ModelRequest {
  return {
    system: COMPACTION_INSTRUCTIONS,
    messages: [
      {
        role: "user",
        content: `<transcript>\n${transcriptText(plan.summarized)}\n</transcript>\n\n${COMPACTION_REQUEST}`,
      },
    ],
    tools: [],
    ...(settings !== undefined ? { settings } : {}),
    conversationId,
    purpose: "compaction",
  };
}

/**
 * The compaction entry: a head marker whose `head` is the first kept entry
 * and whose message (what the model sees first from now on) is the summary.
 * `data` says what it replaced, for the transcript and UIs.
 */
export function compactionEntry(
  taskId: TaskId,
  summary: string,
  details: {
    firstKept: EntryId;
    reason: CompactionReason;
    model: string;
    entries: number;
    usage?: ModelUsage;
    cost?: number;
  },
): AppendEntryInput {
  const data: JsonObject = {
    summary,
    firstKept: details.firstKept,
    reason: details.reason,
    model: details.model,
    summarizedEntries: details.entries,
  };
  if (details.usage) data.usage = usageData(details.usage, details.cost);
  return {
    kind: COMPACTION_ENTRY,
    head: details.firstKept,
    model: [{ role: "user", content: `${SUMMARY_PREFIX}${summary}` }],
    byTaskId: taskId,
    data,
  };
}
