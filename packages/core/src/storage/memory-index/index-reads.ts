import type {
  ConversationRecord,
  DocumentRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../../domain/records.js";
import type {
  ConversationFilter,
  DocumentFilter,
  IdRange,
  StoredEntry,
  SubmissionFilter,
  TaskFilter,
} from "../backend.js";
import type { EntryRange } from "../ancestry.js";
import { addressKey, isLiveAt } from "../lifetimes.js";
import type { DocumentAddress, Order } from "../port.js";
import { scopeKey } from "../scope.js";
import { walkRange } from "../sorted-ids.js";
import { requestKey, type MemoryIndex } from "./memory-index.js";

/*
 * The typed range reads of a `StorageBackend` over a `MemoryIndex`: each walks
 * one sorted id index from the page's start, filters, and stops at the
 * limit. Results are the index's own objects: the front copies them.
 */

/** Up to `limit` rows picked from ids in scan order (`pick` returns undefined to skip an id). */
function collect<T>(
  ids: Iterable<number>,
  limit: number,
  pick: (id: number) => T | undefined,
): T[] {
  const items: T[] = [];
  for (const id of ids) {
    const item = pick(id);
    if (item === undefined) continue;
    items.push(item);
    if (items.length === limit) break;
  }
  return items;
}

/** The ids a page covers: after `range.after`, within `min..max`, in `range.order`. */
function walk(ids: readonly number[], range: IdRange, min = 1, max = Number.MAX_SAFE_INTEGER) {
  const { after, order } = range;
  if (after !== undefined) {
    if (order === "ascending") min = Math.max(min, after + 1);
    else max = Math.min(max, after - 1);
  }
  return walkRange(ids, min, max, order);
}

export function scanConversations<R>(
  index: MemoryIndex<R>,
  filter: ConversationFilter,
  range: IdRange,
): ConversationRecord[] {
  const owner = filter.ownerTaskId;
  return collect(walk(index.conversations.ids(), range), range.limit, (id) => {
    const c = index.conversations.get(id) as ConversationRecord;
    return owner === undefined || c.owner?.taskId === owner ? c : undefined;
  });
}

export function scanEntries<R>(
  index: MemoryIndex<R>,
  ranges: readonly EntryRange[],
  order: Order,
  limit: number,
): EntryRecord[] {
  function* ids(): Generator<number> {
    for (const r of ranges)
      yield* walkRange(index.entries.idsOf(r.conversationId), r.lower + 1, r.upper, order);
  }
  return collect(ids(), limit, (id) => (index.entries.get(id) as StoredEntry).entry);
}

export function latestHead<R>(
  index: MemoryIndex<R>,
  ranges: readonly EntryRange[],
): EntryRecord | undefined {
  for (const r of ranges) {
    const heads = index.heads.get(r.conversationId) ?? [];
    for (const id of walkRange(heads, r.lower + 1, r.upper, "descending"))
      return (index.entries.get(id) as StoredEntry).entry;
  }
  return undefined;
}

export function scanTasks<R>(index: MemoryIndex<R>, f: TaskFilter, range: IdRange): TaskRecord[] {
  const ids =
    f.conversationId === undefined ? index.tasks.ids() : index.tasks.idsOf(f.conversationId);
  return collect(walk(ids, range), range.limit, (id) => {
    const t = index.tasks.get(id) as TaskRecord;
    const match =
      (f.kind === undefined || t.kind === f.kind) &&
      (f.status === undefined || t.state.status === f.status) &&
      (f.abortRequested === undefined || (t.abortRequested === true) === f.abortRequested) &&
      (f.background === undefined || (t.background === true) === f.background) &&
      (f.owner === undefined || t.owner === f.owner);
    return match ? t : undefined;
  });
}

export function scanSubmissions<R>(
  index: MemoryIndex<R>,
  f: SubmissionFilter,
  range: IdRange,
): SubmissionRecord[] {
  return collect(walk(index.submissions.idsOf(f.conversationId), range), range.limit, (id) => {
    const s = index.submissions.get(id) as SubmissionRecord;
    return f.status === undefined || s.status === f.status ? s : undefined;
  });
}

export function submissionByRequest<R>(
  index: MemoryIndex<R>,
  conversationId: number,
  requestId: string,
): SubmissionRecord | undefined {
  const first = index.requests.get(requestKey(conversationId, requestId))?.[0];
  return first === undefined ? undefined : index.submissions.get(first);
}

export function findDocument<R>(
  index: MemoryIndex<R>,
  address: DocumentAddress,
  at: number | "current",
): DocumentRecord | undefined {
  const ids = index.addresses.get(addressKey(address)) ?? [];
  for (let i = ids.length - 1; i >= 0; i--) {
    const record = index.documents.get(ids[i] as number)?.record;
    if (record !== undefined && isLiveAt(record, at)) return record;
  }
  return undefined;
}

export function scanDocuments<R>(
  index: MemoryIndex<R>,
  f: DocumentFilter,
  range: IdRange,
): DocumentRecord[] {
  const ids = index.scopes.get(scopeKey(f.scope)) ?? [];
  return collect(walk(ids, range), range.limit, (id) => {
    const record = index.documents.get(id)?.record;
    if (record === undefined || !isLiveAt(record, f.at)) return undefined;
    return f.kind === undefined || record.kind === f.kind ? record : undefined;
  });
}
