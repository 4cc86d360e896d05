import {
  StorageClosed,
  StorageCorrupted,
  StoragePoisoned,
  StorageRequestError,
  copyJson,
  type Batch,
  type CallOptions,
  type CommitResult,
  type ConversationId,
  type ConversationQuery,
  type ConversationRecord,
  type Cursor,
  type DocumentAddress,
  type DocumentQuery,
  type DocumentRecord,
  type EntryId,
  type EntryQuery,
  type EntryRecord,
  type MaterializedDocument,
  type Order,
  type Page,
  type Seq,
  type Storage,
  type StorageCapabilities,
  type SubmissionQuery,
  type SubmissionRecord,
  type TaskQuery,
  type TaskRecord,
} from "@durably/core";
import {
  checkAddress,
  checkAt,
  checkBatchShape,
  checkId,
  checkLimit,
  checkQuery,
  checkScope,
  decodeIdCursor,
  encodeCursor,
  entrySegments,
  highestId,
  refuse,
  type BatchProblem,
} from "@durably/core/storage";
import { ValueCache } from "./cache.js";
import { CheckedStore } from "./checked-store.js";
import { isId } from "./codec.js";
import { countersPayload, marker, type Counters } from "./commit-chain.js";
import { planBatch } from "./commit-plan.js";
import { findLive, readDocument } from "./documents.js";
import type { KeyValueOp, KeyValueStore, RangeOptions } from "./key-value-store.js";
import { K, pad, prefixEnd, trailingNumber } from "./keys.js";
import { readStoredState, STORE_FORMAT } from "./open-state.js";
import {
  decodeConversation,
  decodeDocumentRecord,
  decodeDocumentState,
  decodeStoredEntry,
  decodeSubmission,
  decodeSubmissionSummary,
  decodeTask,
  decodeTaskSummary,
  isLive,
  missingTarget,
  type TaskSummary,
} from "./records.js";
import { View, type Pending, type Reader } from "./view.js";

export { STORE_FORMAT };

export interface StoreStorageOptions {
  /** Conversation and document-state values kept in memory to spare a read per commit. Default 10 000; 0 disables. */
  cacheSize?: number;
}

const TASK_STATUSES = ["pending", "running", "waiting", "completing", "terminal"];
const SUBMISSION_STATUSES = ["queued", "placed", "done", "unanswered"];
const MAX = Number.MAX_SAFE_INTEGER;

/**
 * The Storage contract on any ordered, transactional `KeyValueStore`
 * (see the package README, "How a commit is stored"). One `commit` call is one atomic
 * `store.write`; every check that can refuse a batch runs before it, so a
 * refused batch never reaches the store. Counters live in memory and are
 * written inside each write, with the write's commit-chain marker. Every
 * value goes through `CheckedStore`: framed with a checksum on write,
 * checked on read.
 */
export class StoreStorage implements Storage, Reader {
  readonly capabilities: StorageCapabilities;
  private seq: number;
  /** At or above every stored record id: a record key with a larger id cannot exist, so it is not read. */
  private idBound: number;
  private minted: number;
  private formatWritten: boolean;
  /** Seq the chain was verified up to at open: written into every commit's counters for the next open. */
  private readonly verified: number;
  /** Checksum field of the newest commit marker. */
  private link: string;
  private readonly kv: CheckedStore;
  private state: "open" | "closed" | "poisoned" = "open";
  private poisonCause: unknown;
  private line: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | undefined;
  private readonly cache: ValueCache;
  /** Bumped by every write, so a read that raced a write does not fill the cache with the old value. */
  private generation = 0;

  private constructor(
    readonly store: KeyValueStore,
    counters: Counters,
    formatWritten: boolean,
    options: StoreStorageOptions,
  ) {
    this.capabilities = Object.freeze({ persistent: store.persistent === true });
    this.seq = counters.seq;
    this.idBound = counters.ids;
    this.minted = Math.max(1, counters.ids);
    this.formatWritten = formatWritten;
    this.verified = counters.seq;
    this.link = counters.link;
    this.cache = new ValueCache(options.cacheSize ?? 10_000);
    this.kv = new CheckedStore(store, (error) => {
      // The store said the outcome of its I/O is uncertain (levelStore: a failed write): trust nothing
      // until a reopen. A failed read (StorageIOError) changed nothing, so the storage stays usable.
      if (error instanceof StoragePoisoned && this.state === "open") {
        this.state = "poisoned";
        this.poisonCause = error;
      }
    });
  }

  /**
   * Opens the store (if it has an `open`), reads the counters, verifies the
   * commit chain written since the last verified open, tells the store
   * (`confirmOpen`), and is ready. The storage owns the store from now on.
   */
  static async open(
    store: KeyValueStore,
    options: StoreStorageOptions = {},
  ): Promise<StoreStorage> {
    try {
      await store.open?.();
      const { counters, formatWritten } = await readStoredState(store);
      await store.confirmOpen?.();
      return new StoreStorage(store, counters, formatWritten, options);
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error;
    }
  }

  // ---- commit -------------------------------------------------------------

  commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    try {
      this.enter(options);
      // Detach before returning control: later mutation of the caller's objects changes nothing stored.
      const { copies, invalid } = detach(batches);
      return this.exclusive(() => this.store_(copies, invalid, receive));
    } catch (error) {
      // As thrown: an abort rejects with the signal's reason, whatever its type.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      return Promise.reject(error);
    }
  }

  private async store_(
    batches: Batch[],
    invalid: { index: number; problem: BatchProblem } | undefined,
    receive: (index: number, seq: Seq) => void,
  ): Promise<CommitResult> {
    if (this.state === "poisoned") throw this.poisoned();
    const call: Pending = new Map();
    const seqs: number[] = [];
    let seq = this.seq;
    let idBound = this.idBound;
    let refused: Error | undefined;
    for (let i = 0; i < batches.length; i++) {
      const batch = batches[i] as Batch;
      const shape = invalid?.index === i ? invalid.problem : checkBatchShape(batch);
      if (shape) {
        refused = refuse(i, shape);
        break;
      }
      const own: Pending = new Map();
      const planned = await planBatch(batch, seq + 1, new View(this, [own, call]));
      if (planned) {
        refused = refuse(i, planned);
        break;
      }
      for (const [key, value] of own) call.set(key, value);
      seqs.push(++seq);
      idBound = Math.max(idBound, highestId(batch));
    }
    if (seqs.length > 0) {
      const ids = Math.max(this.minted, idBound);
      const ops: KeyValueOp[] = [];
      for (const [key, value] of call)
        ops.push(value === null ? { type: "del", key } : { type: "put", key, value });
      const chained = marker(this.seq + 1, seq, this.link);
      ops.push({ type: "put", key: chained.key, value: chained.payload });
      const counters: Counters = { seq, ids, verified: this.verified, link: chained.link };
      ops.push({ type: "put", key: K.counters, value: countersPayload(counters) });
      if (!this.formatWritten)
        ops.push({ type: "put", key: K.format, value: String(STORE_FORMAT) });
      this.generation++;
      try {
        await this.kv.write(ops);
      } catch (error) {
        // The write may or may not have landed: nothing in memory can be trusted until a reopen.
        this.state = "poisoned";
        this.poisonCause = error;
        throw error;
      }
      this.generation++;
      this.link = chained.link;
      this.seq = seq;
      this.idBound = idBound;
      this.formatWritten = true;
      for (const [key, value] of call) {
        if (!isCached(key)) continue;
        if (value === null) this.cache.delete(key);
        else this.cache.set(key, { raw: value });
      }
      seqs.forEach((s, index) => receive(index, s as Seq));
    }
    return refused ? { stored: seqs.length, refused } : { stored: seqs.length };
  }

  mintId(options?: CallOptions): Promise<number> {
    try {
      this.enter(options);
      const next = Math.max(this.minted, this.idBound) + 1;
      if (!Number.isSafeInteger(next)) throw new RangeError("id space exhausted");
      this.minted = next;
      return Promise.resolve(next);
    } catch (error) {
      // As thrown: an abort rejects with the signal's reason, whatever its type.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      return Promise.reject(error);
    }
  }

  // ---- Reader (used by planning and reads) ---------------------------------

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

  // ---- conversations --------------------------------------------------------

  async conversation(
    id: ConversationId,
    options?: CallOptions,
  ): Promise<ConversationRecord | undefined> {
    this.enter(options);
    return this.conversationRecord(checkId("conversation id", id));
  }

  private async conversationRecord(id: number): Promise<ConversationRecord | undefined> {
    const key = K.conversation(id);
    const raw = await this.get(key, id);
    return raw === undefined ? undefined : decodeConversation(key, raw);
  }

  async scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<ConversationRecord>> {
    this.enter(options);
    const scan = "scanConversations";
    const order = checkQuery(scan, query, ["ownerTaskId"], "ascending");
    checkLimit(limit);
    const owner = optionalId(scan, "ownerTaskId", query.ownerTaskId);
    const after = decodeIdCursor(scan, query, cursor);
    const prefix = owner === undefined ? K.conversations : K.conversationsByOwner(owner);
    return this.page(
      scan,
      query,
      limit,
      idRanges(this.kv, [{ prefix }], order, after),
      async (key, raw) => {
        if (owner === undefined) return decodeConversation(key, raw);
        const id = trailingNumber(key) as number;
        return found(await this.conversationRecord(id), key, `conversation ${id}`);
      },
    );
  }

  // ---- entries -----------------------------------------------------------

  async entry(
    id: EntryId,
    options?: CallOptions,
  ): Promise<{ entry: EntryRecord; commitSeq: Seq } | undefined> {
    this.enter(options);
    checkId("entry id", id);
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
    return { entry, commitSeq: seq as Seq };
  }

  async scanEntries(
    query: EntryQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<EntryRecord>> {
    this.enter(options);
    const scan = "scanEntries";
    const order = checkQuery(
      scan,
      query,
      ["conversationId", "minEntryId", "maxEntryId"],
      "descending",
    );
    checkLimit(limit);
    const conversationId = requiredId(scan, "conversationId", query.conversationId);
    const min = optionalId(scan, "minEntryId", query.minEntryId) ?? 1;
    const max = optionalId(scan, "maxEntryId", query.maxEntryId) ?? MAX;
    const after = decodeIdCursor(scan, query, cursor);
    const segments = await entrySegments(conversationId as ConversationId, (id) =>
      this.conversationRecord(id),
    );
    if (segments === undefined) return { items: [] };
    // Segments come newest first and cover disjoint id ranges, so an ascending scan walks them in reverse.
    const ranges = segments.map((s) => ({
      prefix: K.entries(s.conversationId),
      min: Math.max(min, s.minExclusive + 1),
      max: Math.min(max, s.maxInclusive),
    }));
    if (order === "ascending") ranges.reverse();
    return this.page(scan, query, limit, idRanges(this.kv, ranges, order, after), (key, raw) =>
      Promise.resolve(decodeStoredEntry(key, raw).entry),
    );
  }

  async latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
    options?: CallOptions,
  ): Promise<EntryRecord | undefined> {
    this.enter(options);
    checkId("conversation id", conversationId);
    const upper = atOrBefore === undefined ? MAX : checkId("atOrBefore", atOrBefore);
    const segments = await entrySegments(conversationId, (id) => this.conversationRecord(id));
    for (const segment of segments ?? []) {
      const max = Math.min(upper, segment.maxInclusive);
      const min = segment.minExclusive + 1;
      if (min > max) continue;
      const prefix = K.heads(segment.conversationId);
      for await (const [key] of this.kv.range({
        gte: prefix + pad(min),
        lt: upperKey(prefix, max),
        reverse: true,
        limit: 1,
      })) {
        const id = trailingNumber(key);
        if (id === undefined)
          throw new StorageCorrupted(`key ${key}: not a head index key`, { key });
        const entryKey = K.entry(segment.conversationId, id);
        const raw = await this.kv.get(entryKey);
        if (raw === undefined) throw missingTarget(key, `entry ${entryKey}`);
        return decodeStoredEntry(entryKey, raw).entry;
      }
    }
    return undefined;
  }

  // ---- tasks ---------------------------------------------------------------

  async task(id: TaskRecord["id"], options?: CallOptions): Promise<TaskRecord | undefined> {
    this.enter(options);
    checkId("task id", id);
    return this.taskRecord(id);
  }

  private async taskRecord(id: number): Promise<TaskRecord | undefined> {
    const key = K.task(id);
    const raw = await this.get(key, id);
    return raw === undefined ? undefined : decodeTask(key, raw);
  }

  async scanTasks(
    query: TaskQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<TaskRecord>> {
    this.enter(options);
    const scan = "scanTasks";
    const order = checkQuery(
      scan,
      query,
      ["conversationId", "kind", "status", "abortRequested", "background", "owner"],
      "ascending",
    );
    checkLimit(limit);
    const want: Partial<TaskSummary> = {};
    const c = optionalId(scan, "conversationId", query.conversationId);
    if (c !== undefined) want.c = c;
    const o = optionalId(scan, "owner", query.owner);
    if (o !== undefined) want.o = o;
    if (query.kind !== undefined)
      want.k = field(scan, "kind", query.kind, typeof query.kind === "string");
    if (query.status !== undefined)
      want.s = field(scan, "status", query.status, TASK_STATUSES.includes(query.status));
    if (query.abortRequested !== undefined)
      want.a = field(
        scan,
        "abortRequested",
        query.abortRequested,
        typeof query.abortRequested === "boolean",
      );
    if (query.background !== undefined)
      want.b = field(scan, "background", query.background, typeof query.background === "boolean");
    const after = decodeIdCursor(scan, query, cursor);
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
    if (prefix === undefined) {
      return this.page(
        scan,
        query,
        limit,
        idRanges(this.kv, [{ prefix: K.tasks }], order, after),
        (key, raw) => {
          const task = decodeTask(key, raw);
          return Promise.resolve(matches(summaryOf(task)) ? task : undefined);
        },
      );
    }
    return this.page(
      scan,
      query,
      limit,
      idRanges(this.kv, [{ prefix }], order, after),
      async (key, raw) => {
        if (!matches(decodeTaskSummary(key, raw))) return undefined;
        const id = trailingNumber(key) as number;
        return found(await this.taskRecord(id), key, `task ${id}`);
      },
    );
  }

  // ---- submissions -------------------------------------------------------------

  async submission(
    id: SubmissionRecord["id"],
    options?: CallOptions,
  ): Promise<SubmissionRecord | undefined> {
    this.enter(options);
    checkId("submission id", id);
    return this.submissionRecord(id);
  }

  private async submissionRecord(id: number): Promise<SubmissionRecord | undefined> {
    const key = K.submission(id);
    const raw = await this.get(key, id);
    return raw === undefined ? undefined : decodeSubmission(key, raw);
  }

  async scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<SubmissionRecord>> {
    this.enter(options);
    const scan = "scanSubmissions";
    const order = checkQuery(scan, query, ["conversationId", "status"], "ascending");
    checkLimit(limit);
    const conversationId = requiredId(scan, "conversationId", query.conversationId);
    const status =
      query.status === undefined
        ? undefined
        : field(scan, "status", query.status, SUBMISSION_STATUSES.includes(query.status));
    const after = decodeIdCursor(scan, query, cursor);
    const prefix = K.submissionsByConversation(conversationId);
    return this.page(
      scan,
      query,
      limit,
      idRanges(this.kv, [{ prefix }], order, after),
      async (key, raw) => {
        if (status !== undefined && decodeSubmissionSummary(key, raw).s !== status)
          return undefined;
        const id = trailingNumber(key) as number;
        return found(await this.submissionRecord(id), key, `submission ${id}`);
      },
    );
  }

  async submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
    options?: CallOptions,
  ): Promise<SubmissionRecord | undefined> {
    this.enter(options);
    checkId("conversation id", conversationId);
    if (typeof requestId !== "string")
      throw new StorageRequestError(
        "bad-argument",
        `requestId must be a string, got ${typeof requestId}`,
      );
    const prefix = K.submissionsByRequest(conversationId, requestId);
    for await (const [key] of this.kv.range({ gte: prefix, lt: prefixEnd(prefix), limit: 1 })) {
      const id = trailingNumber(key);
      if (id === undefined)
        throw new StorageCorrupted(`key ${key}: not a request index key`, { key });
      return found(await this.submissionRecord(id), key, `submission ${id}`);
    }
    return undefined;
  }

  // ---- documents ---------------------------------------------------------------

  async findDocument(
    address: DocumentAddress,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<DocumentRecord | undefined> {
    this.enter(options);
    const a = checkAddress(address);
    const scope = a.scope;
    return findLive(this, K.documentsAt(a.kind, scope, a.key), checkAt(at));
  }

  async document(
    id: DocumentRecord["id"],
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<MaterializedDocument | undefined> {
    this.enter(options);
    checkId("document id", id);
    const when = checkAt(at);
    const state = await this.decoded(K.document(id), id, decodeDocumentState);
    return state === undefined ? undefined : readDocument(this, state, when);
  }

  async scanDocuments(
    query: DocumentQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<DocumentRecord>> {
    this.enter(options);
    const scan = "scanDocuments";
    const order = checkQuery(scan, query, ["scope", "at", "kind"], "ascending");
    checkLimit(limit);
    const scope = checkScope(query.scope);
    const at = checkAt(query.at);
    const kind =
      query.kind === undefined
        ? undefined
        : field(scan, "kind", query.kind, typeof query.kind === "string");
    const after = decodeIdCursor(scan, query, cursor);
    return this.page(
      scan,
      query,
      limit,
      idRanges(this.kv, [{ prefix: K.documentsIn(scope) }], order, after),
      (key, raw) => {
        const record = decodeDocumentRecord(key, raw);
        return Promise.resolve(
          isLive(record, at) && (kind === undefined || record.kind === kind) ? record : undefined,
        );
      },
    );
  }

  // ---- lifecycle -------------------------------------------------------------

  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.state = "closed";
    // Let commits already in the line finish, then close the store.
    this.closing = this.line.then(() => this.store.close());
    return this.closing;
  }

  // ---- helpers -------------------------------------------------------------

  private enter(options: CallOptions | undefined): void {
    if (this.state === "closed") throw new StorageClosed("the storage is closed");
    if (this.state === "poisoned") throw this.poisoned();
    const signal = options?.signal;
    if (signal?.aborted) throw signal.reason;
  }

  private poisoned(): StoragePoisoned {
    return new StoragePoisoned(
      "an earlier write to the store failed with an uncertain outcome; reopen the storage",
      {
        cause: this.poisonCause,
      },
    );
  }

  /** Commit calls run one at a time. */
  private exclusive<T>(run: () => Promise<T>): Promise<T> {
    const result = this.line.then(run);
    this.line = result.catch(() => undefined);
    return result;
  }

  /**
   * One page of a scan: reads the ranges lazily, keeps what `item` returns
   * (undefined filters out), stops one item past `limit` to know whether a
   * next page exists.
   */
  private async page<T>(
    scan: string,
    query: object,
    limit: number,
    pairs: AsyncIterable<[string, string]>,
    item: (key: string, raw: string) => Promise<T | undefined>,
  ): Promise<Page<T>> {
    const items: T[] = [];
    let lastId = 0;
    for await (const [key, raw] of pairs) {
      const value = await item(key, raw);
      if (value === undefined) continue;
      if (items.length === limit) return { items, next: encodeCursor(scan, query, lastId) };
      items.push(value);
      lastId = trailingNumber(key) ?? 0;
      if (lastId === 0) throw new StorageCorrupted(`key ${key}: does not end in an id`, { key });
    }
    return { items };
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

/** Key ranges of id-keyed prefixes, each within inclusive id bounds, walked in `order` after the cursor id. */
async function* idRanges(
  store: CheckedStore,
  ranges: readonly { prefix: string; min?: number; max?: number }[],
  order: Order,
  after: number | undefined,
): AsyncGenerator<[string, string]> {
  for (const range of ranges) {
    let min = range.min ?? 1;
    let max = range.max ?? MAX;
    if (after !== undefined) {
      if (order === "ascending") min = Math.max(min, after + 1);
      else max = Math.min(max, after - 1);
    }
    if (min > max) continue;
    yield* store.range({
      gte: range.prefix + pad(min),
      lt: upperKey(range.prefix, max),
      reverse: order === "descending",
    });
  }
}

function field<T>(scan: string, name: string, value: T, ok: boolean): T {
  if (!ok)
    throw new StorageRequestError(
      "bad-query",
      `${scan}: ${name} has an invalid value ${JSON.stringify(value)}`,
    );
  return value;
}

function optionalId(scan: string, name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  return field(scan, name, value, isId(value)) as number;
}

function requiredId(scan: string, name: string, value: unknown): number {
  if (value === undefined)
    throw new StorageRequestError("bad-query", `${scan}: ${name} is required`);
  return optionalId(scan, name, value) as number;
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

/**
 * Copies every batch (validating strict JSON on the way), up to the first
 * batch that cannot be copied: that one will be refused as `invalid-write`
 * and later ones are never attempted.
 */
function detach(batches: readonly Batch[]): {
  copies: Batch[];
  invalid?: { index: number; problem: BatchProblem };
} {
  if (!Array.isArray(batches)) throw new TypeError("commit: batches must be an array of batches");
  const copies: Batch[] = [];
  for (let i = 0; i < batches.length; i++) {
    const batch = batches[i] as unknown;
    if (!Array.isArray(batch)) {
      copies.push(batch as Batch);
      return {
        copies,
        invalid: {
          index: i,
          problem: {
            writeIndex: 0,
            reason: "invalid-write",
            message: "a batch must be an array of writes",
          },
        },
      };
    }
    const copy: Batch[number][] = [];
    for (let j = 0; j < batch.length; j++) {
      try {
        copy.push(copyJson(batch[j], `batch[${i}][${j}]`) as unknown as Batch[number]);
      } catch (error) {
        if (!(error instanceof TypeError)) throw error;
        copies.push(copy);
        return {
          copies,
          invalid: {
            index: i,
            problem: { writeIndex: j, reason: "invalid-write", message: error.message },
          },
        };
      }
    }
    copies.push(copy);
  }
  return { copies };
}
