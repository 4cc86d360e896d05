import type { ConversationId, EntryId, SubmissionId, TaskId } from "../domain/ids.js";
import type {
  ConversationRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";
import type {
  ConversationQuery,
  Cursor,
  EntryQuery,
  Page,
  SubmissionQuery,
  TaskQuery,
} from "../storage/port.js";
import { mergedScan } from "./merged-scan.js";
import { matchesTaskQuery } from "./task-records.js";
import { visibleIn, type TransactionState } from "./transaction-state.js";

/*
 * Table reads of a transaction: committed state plus every prepared commit
 * (read-your-writes across the pipeline). Only allowed before the
 * transaction's first table write; the front checks that.
 */

export function conversation(
  tx: TransactionState,
  id: ConversationId,
): Promise<ConversationRecord | undefined> {
  return tx.findConversation(id);
}

export function entry(tx: TransactionState, id: EntryId): Promise<EntryRecord | undefined> {
  return tx.findEntry(id);
}

export function task(tx: TransactionState, id: TaskId): Promise<TaskRecord | undefined> {
  return tx.findTask(id);
}

export function submission(
  tx: TransactionState,
  id: SubmissionId,
): Promise<SubmissionRecord | undefined> {
  return tx.findSubmission(id);
}

/** The submission of that conversation with that request id (lowest id if several). */
export async function submissionByRequest(
  tx: TransactionState,
  conversationId: ConversationId,
  requestId: string,
): Promise<SubmissionRecord | undefined> {
  const table = tx.kernel.overlay.submissions;
  const candidates = table
    .values()
    .filter((s) => s.conversationId === conversationId && s.requestId === requestId);
  const stored = await tx.kernel.storage.submissionByRequest(conversationId, requestId);
  // A stored copy whose id the overlay holds is stale; the overlay's version was filtered above.
  if (stored && table.get(stored.id) === undefined) candidates.push(stored);
  return candidates.sort((a, b) => a.id - b.id)[0];
}

/** Newest visible entry carrying a `head` marker, at or before `atOrBefore`. */
export async function latestHead(
  tx: TransactionState,
  conversationId: ConversationId,
  atOrBefore?: EntryId,
): Promise<EntryRecord | undefined> {
  const pending = tx.kernel.overlay.entries.values().filter((e) => e.head !== undefined);
  const stored = await tx.kernel.storage.latestHead(conversationId, atOrBefore);
  if (pending.length === 0) return stored;
  const segments = (await tx.segments(conversationId)) ?? [];
  let best = stored;
  for (const e of pending) {
    if (atOrBefore !== undefined && e.id > atOrBefore) continue;
    if (!visibleIn(segments, e)) continue;
    if (!best || e.id > best.id) best = e;
  }
  return best;
}

export async function scanEntries(
  tx: TransactionState,
  query: EntryQuery,
  limit: number,
  cursor?: Cursor,
): Promise<Page<EntryRecord>> {
  const pending = tx.kernel.overlay.entries.values();
  let overlay: EntryRecord[] = [];
  if (pending.length > 0 && query !== null && typeof query === "object") {
    const segments = (await tx.segments(query.conversationId)) ?? [];
    overlay = pending.filter(
      (e) =>
        visibleIn(segments, e) &&
        (query.minEntryId === undefined || e.id >= query.minEntryId) &&
        (query.maxEntryId === undefined || e.id <= query.maxEntryId),
    );
  }
  return mergedScan({
    name: "scanEntries",
    query,
    limit,
    cursor,
    descending: (query as { order?: string } | null)?.order !== "ascending",
    overlay,
    overridden: () => false,
    overlayEmpty: pending.length === 0,
    fetch: (l, c) => tx.kernel.storage.scanEntries(query, l, c),
  });
}

export async function scanTasks(
  tx: TransactionState,
  query: TaskQuery,
  limit: number,
  cursor?: Cursor,
): Promise<Page<TaskRecord>> {
  const pending = tx.kernel.overlay.tasks.values();
  const ids = new Set<number>(pending.map((t) => t.id));
  return mergedScan({
    name: "scanTasks",
    query,
    limit,
    cursor,
    descending: (query as { order?: string } | null)?.order === "descending",
    overlay: pending.filter((t) => matchesTaskQuery(t, query)),
    overridden: (id) => ids.has(id),
    overlayEmpty: pending.length === 0,
    fetch: (l, c) => tx.kernel.storage.scanTasks(query, l, c),
  });
}

export async function scanConversations(
  tx: TransactionState,
  query: ConversationQuery,
  limit: number,
  cursor?: Cursor,
): Promise<Page<ConversationRecord>> {
  const pending = tx.kernel.overlay.conversations.values();
  return mergedScan({
    name: "scanConversations",
    query,
    limit,
    cursor,
    descending: (query as { order?: string } | null)?.order === "descending",
    overlay: pending.filter(
      (c) => query?.ownerTaskId === undefined || c.owner?.taskId === query.ownerTaskId,
    ),
    overridden: () => false,
    overlayEmpty: pending.length === 0,
    fetch: (l, c) => tx.kernel.storage.scanConversations(query, l, c),
  });
}

export async function scanSubmissions(
  tx: TransactionState,
  query: SubmissionQuery,
  limit: number,
  cursor?: Cursor,
): Promise<Page<SubmissionRecord>> {
  const pending = tx.kernel.overlay.submissions.values();
  const ids = new Set<number>(pending.map((s) => s.id));
  return mergedScan({
    name: "scanSubmissions",
    query,
    limit,
    cursor,
    descending: (query as { order?: string } | null)?.order === "descending",
    overlay: pending.filter(
      (s) =>
        s.conversationId === query?.conversationId &&
        (query.status === undefined || s.status === query.status),
    ),
    overridden: (id) => ids.has(id),
    overlayEmpty: pending.length === 0,
    fetch: (l, c) => tx.kernel.storage.scanSubmissions(query, l, c),
  });
}
