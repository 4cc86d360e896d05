import {
  cloneJson,
  StorageCorrupted,
  type ConversationRecord,
  type DocumentAddress,
  type DocumentRecord,
  type EntryRecord,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import {
  isLiveAt,
  type ConversationFilter,
  type DocumentFilter,
  type DocumentSnapshot,
  type EntryRange,
  type IdRange,
  type Order,
  type StoredEntry,
  type SubmissionFilter,
  type TaskFilter,
} from "@durably/core/storage";
import type { ValueCache } from "./cache.js";
import type { CheckedStore } from "./checked-store.js";
import { isId } from "./codec.js";
import { documentRevisions, findLive } from "./documents.js";
import type { RangeOptions } from "./key-value-store.js";
import { K, pad, prefixEnd, trailingNumber } from "./keys.js";
import {
  decodeConversation,
  decodeDocumentRecord,
  decodeDocumentState,
  decodeStoredEntry,
  decodeSubmission,
  decodeSubmissionSummary,
  decodeTask,
  decodeTaskSummary,
  missingTarget,
  type TaskSummary,
} from "./records.js";
import type { KnownValues } from "./store-view.js";
import type { Reader } from "./view.js";

const MAX = Number.MAX_SAFE_INTEGER;

/**
 * The typed reads of the store backend, each one range read (or one get)
 * of the key layout, plus the cached `Reader` the commit path and the
 * document reads use. Every result is decoded from the stored string, so it
 * is the caller's to keep (`freshReads`).
 */
export class StoreReader implements Reader {
  /** At or above every stored record id: a record key with a larger id cannot exist, so it is not read. */
  protected idBound: number;
  /** Bumped by every write, so a read that raced a write does not fill the cache with the old value. */
  protected generation = 0;

  constructor(
    protected readonly kv: CheckedStore,
    protected readonly cache: ValueCache,
    protected readonly values: KnownValues,
    idBound: number,
  ) {
    this.idBound = idBound;
  }

  /** A stored value; a record key whose id is above the high-water mark is known absent without a read. */
  async get(key: string, id?: number): Promise<string | undefined> {
    if (id !== undefined && id > this.idBound) return undefined;
    const cached = isCached(key) ? this.cache.get(key) : undefined;
    if (cached !== undefined) return cached.raw;
    const generation = this.generation;
    const value = await this.kv.get(key);
    if (value !== undefined && generation === this.generation && isCached(key))
      this.cache.set(key, { raw: value });
    return value;
  }

  /** `get` then `decode`, keeping the decoded form in the cache (callers never mutate it). */
  async decoded<T>(
    key: string,
    id: number,
    decode: (key: string, raw: string) => T,
  ): Promise<T | undefined> {
    const cached = isCached(key) ? this.cache.get(key) : undefined;
    if (cached?.decoded !== undefined) return cached.decoded as T;
    const raw = await this.get(key, id);
    if (raw === undefined) return undefined;
    const value = decode(key, raw);
    const entry = isCached(key) ? this.cache.get(key) : undefined;
    if (entry !== undefined && entry.raw === raw) entry.decoded = value;
    return value;
  }

  range(options: RangeOptions): AsyncIterable<[string, string]> {
    return this.kv.range(options);
  }

  async conversation(id: number): Promise<ConversationRecord | undefined> {
    const key = K.conversation(id);
    const raw = await this.get(key, id);
    return raw === undefined ? undefined : decodeConversation(key, raw);
  }

  scanConversations(filter: ConversationFilter, range: IdRange): Promise<ConversationRecord[]> {
    const owner = filter.ownerTaskId;
    const prefix = owner === undefined ? K.conversations : K.conversationsByOwner(owner);
    return this.#page(range.limit, idRanges(this.kv, [{ prefix }], range), async (key, raw) => {
      if (owner === undefined) return decodeConversation(key, raw);
      const id = trailingNumber(key) as number;
      return found(await this.conversation(id), key, `conversation ${id}`);
    });
  }

  async entry(id: number): Promise<StoredEntry | undefined> {
    const home = K.entryHome(id);
    const raw = await this.get(home, id);
    if (raw === undefined) return undefined;
    const conversationId = Number(raw);
    if (!/^\d{16}$/.test(raw) || !isId(conversationId))
      throw new StorageCorrupted(`key ${home}: not a conversation id: ${raw}`, { key: home });
    const key = K.entry(conversationId, id);
    const stored = await this.kv.get(key);
    if (stored === undefined) throw missingTarget(home, `entry ${key}`);
    const { seq, entry } = decodeStoredEntry(key, stored);
    return { entry, commitSeq: seq };
  }

  scanEntries(ranges: readonly EntryRange[], order: Order, limit: number): Promise<EntryRecord[]> {
    const keyRanges = ranges.map((r) => ({
      prefix: K.entries(r.conversationId),
      min: r.lower + 1,
      max: r.upper,
    }));
    const range = { order, after: undefined, limit };
    return this.#page(limit, idRanges(this.kv, keyRanges, range), (key, raw) =>
      Promise.resolve(decodeStoredEntry(key, raw).entry),
    );
  }

  async latestHead(ranges: readonly EntryRange[]): Promise<EntryRecord | undefined> {
    for (const r of ranges) {
      const prefix = K.heads(r.conversationId);
      for await (const [key] of this.kv.range({
        gte: prefix + pad(r.lower + 1),
        lt: upperKey(prefix, r.upper),
        reverse: true,
        limit: 1,
      })) {
        const id = trailingNumber(key);
        if (id === undefined)
          throw new StorageCorrupted(`key ${key}: not a head index key`, { key });
        const entryKey = K.entry(r.conversationId, id);
        const raw = await this.kv.get(entryKey);
        if (raw === undefined) throw missingTarget(key, `entry ${entryKey}`);
        return decodeStoredEntry(entryKey, raw).entry;
      }
    }
    return undefined;
  }

  async task(id: number): Promise<TaskRecord | undefined> {
    const key = K.task(id);
    const raw = await this.get(key, id);
    return raw === undefined ? undefined : decodeTask(key, raw);
  }

  scanTasks(filter: TaskFilter, range: IdRange): Promise<TaskRecord[]> {
    const want: Partial<TaskSummary> = {};
    if (filter.conversationId !== undefined) want.c = filter.conversationId;
    if (filter.owner !== undefined) want.o = filter.owner;
    if (filter.kind !== undefined) want.k = filter.kind;
    if (filter.status !== undefined) want.s = filter.status;
    if (filter.abortRequested !== undefined) want.a = filter.abortRequested;
    if (filter.background !== undefined) want.b = filter.background;
    const matches = (s: TaskSummary) =>
      (want.c === undefined || s.c === want.c) &&
      (want.o === undefined || s.o === want.o) &&
      (want.k === undefined || s.k === want.k) &&
      (want.s === undefined || s.s === want.s) &&
      (want.a === undefined || s.a === want.a) &&
      (want.b === undefined || s.b === want.b);
    // The most selective index the query allows; the other fields filter the index values.
    const prefix =
      want.o !== undefined
        ? K.tasksByOwner(want.o)
        : want.s !== undefined && want.s !== "terminal"
          ? K.tasksByStatus(want.s)
          : want.c !== undefined
            ? K.tasksByConversation(want.c)
            : want.k !== undefined
              ? K.tasksByKind(want.k)
              : want.s !== undefined
                ? K.tasksByStatus(want.s)
                : undefined;
    if (prefix === undefined)
      return this.#page(
        range.limit,
        idRanges(this.kv, [{ prefix: K.tasks }], range),
        (key, raw) => {
          const task = decodeTask(key, raw);
          return Promise.resolve(matches(summaryOf(task)) ? task : undefined);
        },
      );
    return this.#page(range.limit, idRanges(this.kv, [{ prefix }], range), async (key, raw) => {
      if (!matches(decodeTaskSummary(key, raw))) return undefined;
      const id = trailingNumber(key) as number;
      return found(await this.task(id), key, `task ${id}`);
    });
  }

  async submission(id: number): Promise<SubmissionRecord | undefined> {
    const key = K.submission(id);
    const raw = await this.get(key, id);
    return raw === undefined ? undefined : decodeSubmission(key, raw);
  }

  scanSubmissions(filter: SubmissionFilter, range: IdRange): Promise<SubmissionRecord[]> {
    const { status } = filter;
    const prefix = K.submissionsByConversation(filter.conversationId);
    return this.#page(range.limit, idRanges(this.kv, [{ prefix }], range), async (key, raw) => {
      if (status !== undefined && decodeSubmissionSummary(key, raw).s !== status) return undefined;
      const id = trailingNumber(key) as number;
      return found(await this.submission(id), key, `submission ${id}`);
    });
  }

  async submissionByRequest(
    conversationId: number,
    requestId: string,
  ): Promise<SubmissionRecord | undefined> {
    const prefix = K.submissionsByRequest(conversationId, requestId);
    for await (const [key] of this.kv.range({ gte: prefix, lt: prefixEnd(prefix), limit: 1 })) {
      const id = trailingNumber(key);
      if (id === undefined)
        throw new StorageCorrupted(`key ${key}: not a request index key`, { key });
      return found(await this.submission(id), key, `submission ${id}`);
    }
    return undefined;
  }

  findDocument(
    address: DocumentAddress,
    at: number | "current",
  ): Promise<DocumentRecord | undefined> {
    return findLive(this, K.documentsAt(address.kind, address.scope, address.key), at);
  }

  async document(id: number, at: number | "current"): Promise<DocumentSnapshot | undefined> {
    const state = await this.decoded(K.document(id), id, decodeDocumentState);
    if (state === undefined) return undefined;
    // `state` may be shared with the cache: hand out a copy (a record is flat apart from its scope).
    const record = { ...state.record, scope: { ...state.record.scope } };
    const snapshot = { record, newestBaseSeq: state.base };
    if (!isLiveAt(record, at)) return snapshot;
    const known = at === "current" ? this.values.get(id) : undefined;
    if (known !== undefined)
      return { ...snapshot, value: { ...known, value: cloneJson(known.value) } };
    return { ...snapshot, ...(await documentRevisions(this, state, at)) };
  }

  scanDocuments(filter: DocumentFilter, range: IdRange): Promise<DocumentRecord[]> {
    const { at, kind } = filter;
    const prefix = K.documentsIn(filter.scope);
    return this.#page(range.limit, idRanges(this.kv, [{ prefix }], range), (key, raw) => {
      const record = decodeDocumentRecord(key, raw);
      return Promise.resolve(
        isLiveAt(record, at) && (kind === undefined || record.kind === kind) ? record : undefined,
      );
    });
  }

  /** Up to `limit` items from the pairs in order, keeping what `item` returns (undefined filters out). */
  async #page<T>(
    limit: number,
    pairs: AsyncIterable<[string, string]>,
    item: (key: string, raw: string) => Promise<T | undefined>,
  ): Promise<T[]> {
    const items: T[] = [];
    if (limit <= 0) return items;
    for await (const [key, raw] of pairs) {
      const value = await item(key, raw);
      if (value === undefined) continue;
      if (trailingNumber(key) === undefined)
        throw new StorageCorrupted(`key ${key}: does not end in an id`, { key });
      items.push(value);
      if (items.length === limit) break;
    }
    return items;
  }
}

/** An index key's target, which must exist: a missing one is corruption naming the index key. */
function found<T>(value: T | undefined, key: string, target: string): T {
  if (value === undefined) throw missingTarget(key, target);
  return value;
}

function isCached(key: string): boolean {
  return key.startsWith("c/") || key.startsWith("d/");
}

function upperKey(prefix: string, max: number): string {
  return max >= MAX ? prefixEnd(prefix) : prefix + pad(max + 1);
}

/** Key ranges of id-keyed prefixes, each within inclusive id bounds, walked in order after the page start. */
async function* idRanges(
  store: CheckedStore,
  ranges: readonly { prefix: string; min?: number; max?: number }[],
  range: IdRange,
): AsyncGenerator<[string, string]> {
  const { order, after } = range;
  for (const r of ranges) {
    let min = r.min ?? 1;
    let max = r.max ?? MAX;
    if (after !== undefined) {
      if (order === "ascending") min = Math.max(min, after + 1);
      else max = Math.min(max, after - 1);
    }
    if (min > max) continue;
    yield* store.range({
      gte: r.prefix + pad(min),
      lt: upperKey(r.prefix, max),
      reverse: order === "descending",
    });
  }
}

function summaryOf(task: TaskRecord): TaskSummary {
  const s: TaskSummary = {
    c: task.conversationId,
    k: task.kind,
    s: task.state.status,
    a: task.abortRequested === true,
    b: task.background === true,
  };
  if (task.owner !== undefined) s.o = task.owner;
  return s;
}
