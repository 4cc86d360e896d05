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

/** One conversation's id range of an entry scan: `lower < id <= upper`. */
export interface EntryRange {
  conversationId: ConversationId;
  lower: number;
  upper: number;
}

/**
 * The id ranges a scan over `segments` reads, in scan order (newest first
 * when descending), clipped to `min..max` (inclusive) and to the ids after a
 * cursor `position`; empty ranges are dropped. Reading them one after another
 * yields one id-ordered sequence, so range backends stop once a page is full.
 */
export function entryScanRanges(
  segments: readonly EntrySegment[],
  order: "ascending" | "descending",
  min: number,
  max: number,
  position?: number,
): EntryRange[] {
  const ordered = order === "descending" ? segments : [...segments].reverse();
  const ranges: EntryRange[] = [];
  for (const segment of ordered) {
    let lower = Math.max(segment.minExclusive, min - 1);
    let upper = Math.min(segment.maxInclusive, max);
    if (position !== undefined) {
      if (order === "descending") upper = Math.min(upper, position - 1);
      else lower = Math.max(lower, position);
    }
    if (upper > lower) ranges.push({ conversationId: segment.conversationId, lower, upper });
  }
  return ranges;
}
