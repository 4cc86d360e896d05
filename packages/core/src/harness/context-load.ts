import type { ConversationId, EntryId } from "../domain/ids.js";
import type { EntryRecord, Message } from "../domain/records.js";
import type { Cursor } from "../storage/port.js";
import type { Session } from "../session/session.js";
import { deriveContext } from "./context.js";

const PAGE = 256;

/**
 * The stored entries the model's context is derived from: from the newest
 * head marker's `head` (or the marker, if it points later) on, ascending.
 * Older entries are never read: a compacted conversation's request costs
 * what its context holds, not what its transcript holds.
 */
export async function loadContextEntries(
  session: Session,
  conversationId: ConversationId,
): Promise<EntryRecord[]> {
  const marker = await session.read.latestHead(conversationId);
  const from = marker ? (Math.min(marker.id, marker.head as number) as EntryId) : undefined;
  const entries: EntryRecord[] = [];
  let cursor: Cursor | undefined;
  do {
    const page = await session.read.scanEntries(
      { conversationId, order: "ascending", ...(from !== undefined ? { minEntryId: from } : {}) },
      PAGE,
      cursor,
    );
    entries.push(...page.items);
    cursor = page.next;
  } while (cursor !== undefined);
  return entries;
}

/** The model's context for a conversation: what `deriveContext` makes of `loadContextEntries`. */
export async function loadContext(
  session: Session,
  conversationId: ConversationId,
): Promise<Message[]> {
  return deriveContext(await loadContextEntries(session, conversationId));
}

/**
 * The input tokens of the newest request the model answered since the
 * newest head marker (its assistant entry's `data.usage`), or `undefined`
 * when there is none: a request from before a compaction does not count,
 * its context is gone.
 */
export function lastInputTokens(entries: readonly EntryRecord[]): number | undefined {
  let markerId = 0;
  for (const entry of entries)
    if (entry.head !== undefined && entry.id > markerId) markerId = entry.id;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as EntryRecord;
    if (entry.id <= markerId) break;
    const usage = (entry.data as { usage?: { inputTokens?: unknown } } | undefined)?.usage;
    if (entry.kind === "durably.assistant" && typeof usage?.inputTokens === "number")
      return usage.inputTokens;
  }
  return undefined;
}
