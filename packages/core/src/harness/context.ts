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
 *   it and before the next call of that id, so an id a later answer reuses
 *   pairs with that answer's result. A call without a result gets a
 *   synthetic error result; a result whose
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

  const out: Message[] = [];
  const pairing = new ResultPairing(messages);
  messages.forEach((m, at) => {
    if (m.role === "toolResult") return;
    out.push(m);
    if (m.role === "assistant") out.push(...pairing.resultsFor(m, at));
  });
  return out;
}

/** Positions (in transcript order) of one call id's results or calls, and how far pairing got. */
interface Positions<T> {
  readonly items: { at: number; value: T }[];
  next: number;
}

/**
 * Pairs each call with the first result of its id after it and before the
 * next call of that id (some providers reuse call ids, "call_0" in every
 * answer). Calls come in transcript order, so each id's results and calls
 * are walked once: linear in the transcript however often an id repeats.
 */
class ResultPairing {
  private readonly results = new Map<string, Positions<ToolResultMessage>>();
  private readonly calls = new Map<string, Positions<null>>();

  constructor(messages: readonly Message[]) {
    messages.forEach((m, at) => {
      if (m.role === "toolResult") push(this.results, m.toolCallId, at, m);
      else if (m.role === "assistant")
        for (const part of m.content)
          if (part.type === "toolCall") push(this.calls, part.id, at, null);
    });
  }

  resultsFor(message: AssistantMessage, at: number): ToolResultMessage[] {
    const out: ToolResultMessage[] = [];
    for (const part of message.content) {
      if (part.type !== "toolCall") continue;
      out.push(
        this.take(part.id, at) ?? {
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

  /** The first unused result of `id` after `at` and before the next call of `id`. */
  private take(id: string, at: number): ToolResultMessage | undefined {
    const calls = this.calls.get(id) as Positions<null>;
    while (calls.next < calls.items.length && (calls.items[calls.next] as { at: number }).at <= at)
      calls.next++;
    const until = calls.items[calls.next]?.at ?? Infinity;
    const results = this.results.get(id);
    if (!results) return undefined;
    // Results before this call can serve no later call either: passed over for good.
    while (
      results.next < results.items.length &&
      (results.items[results.next] as { at: number }).at < at
    )
      results.next++;
    const found = results.items[results.next];
    if (!found || found.at >= until) return undefined;
    results.next++;
    return found.value;
  }
}

function push<T>(map: Map<string, Positions<T>>, id: string, at: number, value: T): void {
  const positions = map.get(id);
  if (positions) positions.items.push({ at, value });
  else map.set(id, { items: [{ at, value }], next: 0 });
}
