import type { EntryId } from "../domain/ids.js";
import type {
  AssistantMessage,
  EntryRecord,
  Message,
  ToolResultMessage,
} from "../domain/records.js";

/** The content of the synthetic result for a tool call that has none (e.g. after a crash). */
export const MISSING_RESULT_CONTENT =
  "error: this tool call has no result (the run stopped before the tool finished, or its result was removed)";

/**
 * The id of the first entry the model sees: the `head` of the newest entry
 * carrying a head marker, or `undefined` (the whole transcript).
 */
export function contextStart(entries: readonly EntryRecord[]): EntryId | undefined {
  let marker: EntryRecord | undefined;
  for (const entry of entries)
    if (entry.head !== undefined && (!marker || entry.id > marker.id)) marker = entry;
  return marker?.head;
}

/** Assistant messages that ended this way stay in the transcript but are never sent again. */
const UNSENT: ReadonlySet<string> = new Set(["aborted", "error"]);

/**
 * What the model sees of a transcript (context derivation).
 *
 * `entries` is the visible transcript in ascending id order: all of it, or
 * any suffix that starts at or before the newest head marker's `head`.
 * - The newest entry carrying a head marker (a compaction) decides: its
 *   own messages (the summary) come first, then every entry from its
 *   `head` (the first kept entry) on, in id order, that is not itself a
 *   head marker: the kept entries, then what came after the marker. An
 *   older marker in that range is left out (a newer marker supersedes it),
 *   also when the newer one keeps entries from before the older one's range:
 *   those are then seen as they were, and the older summary is not.
 * - `edits` of the counted entries apply in entry order (a later edit of
 *   the same entry wins): `omit` hides the target's messages, `replace`
 *   swaps them. A marker starts a fresh context, so edits before it no
 *   longer apply.
 * - Assistant messages that ended `aborted` or `error` are left out, and
 *   with them their tool calls (and so those calls' results).
 * - Each tool result is placed right after the assistant message holding
 *   its call, in call order: a call takes the first result of its id after
 *   it, so an id a later answer reuses pairs with that answer's result. A
 *   call without a result gets a synthetic error result; a result whose
 *   call is not in view is left out (model APIs refuse a result without its
 *   call), and so is a second result of a call.
 */
export function deriveContext(entries: readonly EntryRecord[]): Message[] {
  let marker: EntryRecord | undefined;
  for (const entry of entries)
    if (entry.head !== undefined && (!marker || entry.id > marker.id)) marker = entry;
  const start = marker?.head;
  const window = start === undefined ? entries : entries.filter((e) => e.id >= start);

  const edited = new Map<number, Message[] | null>();
  const own = (entry: EntryRecord): readonly Message[] | null | undefined =>
    edited.has(entry.id) ? edited.get(entry.id) : entry.model;
  for (const entry of marker ? [marker, ...window] : window)
    for (const edit of entry.edits ?? [])
      edited.set(edit.entryId, edit.type === "omit" ? null : edit.model);

  const messages: Message[] = [];
  const take = (list: readonly Message[] | null | undefined): void => {
    for (const m of list ?? [])
      if (m.role !== "assistant" || !UNSENT.has(m.stopReason)) messages.push(m);
  };
  if (marker) take(own(marker));
  for (const entry of window) if (entry.head === undefined) take(own(entry));

  // Results by call id, in transcript order: a call takes the first unused result after it, so a
  // call id a provider reuses in a later answer (some number calls per response) pairs with its own.
  const results = new Map<string, { at: number; message: ToolResultMessage; used?: true }[]>();
  messages.forEach((m, at) => {
    if (m.role !== "toolResult") return;
    const list = results.get(m.toolCallId);
    if (list) list.push({ at, message: m });
    else results.set(m.toolCallId, [{ at, message: m }]);
  });

  const out: Message[] = [];
  messages.forEach((m, at) => {
    if (m.role === "toolResult") return;
    out.push(m);
    if (m.role === "assistant") out.push(...resultsFor(m, at, results));
  });
  return out;
}

function resultsFor(
  message: AssistantMessage,
  at: number,
  results: ReadonlyMap<string, { at: number; message: ToolResultMessage; used?: true }[]>,
): ToolResultMessage[] {
  const out: ToolResultMessage[] = [];
  for (const part of message.content) {
    if (part.type !== "toolCall") continue;
    const found = results.get(part.id)?.find((r) => r.at > at && !r.used);
    if (found) found.used = true;
    out.push(
      found?.message ?? {
        role: "toolResult",
        toolCallId: part.id,
        toolName: part.name,
        content: MISSING_RESULT_CONTENT,
        isError: true,
      },
    );
  }
  return out;
}
