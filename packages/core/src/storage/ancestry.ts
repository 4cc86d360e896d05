import { StorageCorrupted } from "../domain/errors.js";
import type { ConversationId, EntryId } from "../domain/ids.js";
import type { ConversationRecord } from "../domain/records.js";

/** Entries of `conversationId` with `minExclusive < id <= maxInclusive` are visible. */
export interface EntrySegment {
  conversationId: ConversationId;
  minExclusive: number;
  maxInclusive: number;
}

/**
 * The id ranges an entry scan of `conversationId` covers, newest segment
 * first: the conversation's own entries, then each ancestor's entries up to
 * the fork point below it. Ids are global and minted in order, so the ranges
 * are disjoint and a scan can walk them one after another.
 * Returns `undefined` when the conversation does not exist.
 */
export async function entrySegments(
  conversationId: ConversationId,
  getConversation: (
    id: ConversationId,
  ) => Promise<ConversationRecord | undefined> | ConversationRecord | undefined,
): Promise<EntrySegment[] | undefined> {
  const segments: EntrySegment[] = [];
  let current = await getConversation(conversationId);
  if (current === undefined) return undefined;
  let upper = Number.MAX_SAFE_INTEGER;
  const seen = new Set<number>();
  for (;;) {
    if (seen.has(current.id))
      throw new StorageCorrupted(`conversation ${conversationId} has a cyclic fork ancestry`, {
        table: "conversations",
      });
    seen.add(current.id);
    const parent: { conversationId: ConversationId; at: EntryId } | undefined = current.parent;
    const lower = parent ? parent.at : 0;
    segments.push({ conversationId: current.id, minExclusive: lower, maxInclusive: upper });
    if (!parent) return segments;
    upper = Math.min(upper, parent.at);
    const next = await getConversation(parent.conversationId);
    if (next === undefined)
      throw new StorageCorrupted(
        `conversation ${current.id} forks from missing conversation ${parent.conversationId}`,
        { table: "conversations" },
      );
    current = next;
  }
}
