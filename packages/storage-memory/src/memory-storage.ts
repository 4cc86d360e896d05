import {
  checkAddress,
  checkAt,
  checkId,
  checkLimit,
  checkQuery,
  checkScope,
  cloneJson,
  decodeIdCursor,
  entrySegments,
  idField,
  oneOfField,
  refuse,
  scopeKey,
  StorageClosed,
  StorageRequestError,
  type BatchRefused,
  type CallOptions,
  type CommitResult,
  type ConversationId,
  type ConversationQuery,
  type ConversationRecord,
  type Cursor,
  type DocumentAddress,
  type DocumentId,
  type DocumentQuery,
  type DocumentRecord,
  type DocumentScope,
  type EntryId,
  type EntryQuery,
  type EntryRecord,
  type Json,
  type MaterializedDocument,
  type Page,
  type Seq,
  type Storage,
  type StorageCapabilities,
  type SubmissionId,
  type SubmissionQuery,
  type SubmissionRecord,
  type TaskId,
  type TaskQuery,
  type TaskRecord,
  type Batch,
  isSealedBatches,
} from "@durably/core";
import { applyBatch, prepareBatch } from "./commit-batch.js";
import { addressKey, isLive, readAt } from "./documents.js";
import { MemoryState, requestKey } from "./memory-state.js";
import { collectPage, idCursor, rangeAfter } from "./pages.js";
import { walkRange } from "@durably/core";

const TASK_STATUSES = ["pending", "running", "waiting", "completing", "terminal"] as const;
const SUBMISSION_STATUSES = ["queued", "placed", "done", "unanswered"] as const;
const BOOLEANS = [true, false] as const;

/** Hands out a private copy; storage internals never leave. */
function out<T>(value: T): T {
  return cloneJson(value as Json) as T;
}

/**
 * The reference Storage: every rule of the contract, nothing persisted.
 * Everything is copied on the way in (`copyJson`) and out (`cloneJson`), so
 * a caller that keeps or mutates a reference shows up here first; the
 * Session's sealed batches (`isSealedBatches`) are deeply frozen, so they are
 * kept without the copy on the way in.
 *
 * To simulate a slow or failing backend in tests, subclass it and override
 * `commit` (or any read), calling `super` for the real behaviour.
 */
export class MemoryStorage implements Storage {
  readonly capabilities: StorageCapabilities = Object.freeze({ persistent: false });
  private readonly state = new MemoryState();
  private closed = false;

  /** Throws (so the async caller rejects) when closed or already aborted. */
  private guard(options: CallOptions | undefined): MemoryState {
    if (this.closed) throw new StorageClosed("memory storage is closed");
    options?.signal?.throwIfAborted();
    return this.state;
  }

  // Batches are copied and stored synchronously, before the first await, so
  // the caller may mutate them as soon as `commit` returns its promise.
  async commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    const state = this.guard(options);
    if (!Array.isArray(batches)) throw new TypeError("commit: batches must be an array of batches");
    if (typeof receive !== "function") throw new TypeError("commit: receive must be a function");
    const seqs: number[] = [];
    let refused: BatchRefused | undefined;
    // The Session's own batches are checked and frozen already: kept, not copied.
    const sealed = isSealedBatches(batches);
    for (let b = 0; b < batches.length; b++) {
      const prepared = prepareBatch(state, batches[b], b, sealed);
      if ("problem" in prepared) {
        refused = refuse(b, prepared.problem);
        break;
      }
      const seq = state.lastSeq + 1;
      applyBatch(state, prepared.batch, seq);
      seqs.push(seq);
    }
    await Promise.resolve();
    for (let i = 0; i < seqs.length; i++) receive(i, seqs[i] as Seq);
    return refused === undefined ? { stored: seqs.length } : { stored: seqs.length, refused };
  }

  async mintId(options?: CallOptions): Promise<number> {
    const state = this.guard(options);
    state.highWater += 1;
    return Promise.resolve(state.highWater);
  }

  async conversation(
    id: ConversationId,
    options?: CallOptions,
  ): Promise<ConversationRecord | undefined> {
    const state = this.guard(options);
    const found = state.conversations.get(checkId("conversation id", id));
    return Promise.resolve(found && out(found));
  }

  async scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<ConversationRecord>> {
    const state = this.guard(options);
    const scan = "scanConversations";
    checkLimit(limit);
    const order = checkQuery(scan, query, ["ownerTaskId"], "ascending");
    const owner = idField(scan, query, "ownerTaskId", false);
    const { min, max } = rangeAfter(decodeIdCursor(scan, query, cursor), order);
    const page = collectPage(
      walkRange(state.conversations.ids(), min, max, order),
      limit,
      (id) => {
        const c = state.conversations.get(id) as ConversationRecord;
        return owner === undefined || c.owner?.taskId === owner ? out(c) : undefined;
      },
      idCursor(scan, query),
    );
    return Promise.resolve(page);
  }

  async entry(
    id: EntryId,
    options?: CallOptions,
  ): Promise<{ entry: EntryRecord; commitSeq: Seq } | undefined> {
    const state = this.guard(options);
    const found = state.entries.get(checkId("entry id", id));
    return Promise.resolve(found && { entry: out(found.entry), commitSeq: found.commitSeq as Seq });
  }

  async latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
    options?: CallOptions,
  ): Promise<EntryRecord | undefined> {
    const state = this.guard(options);
    checkId("conversationId", conversationId);
    const ceiling =
      atOrBefore === undefined ? Number.MAX_SAFE_INTEGER : checkId("atOrBefore", atOrBefore);
    const segments = await entrySegments(conversationId, (id) => state.conversations.get(id));
    for (const segment of segments ?? []) {
      const heads = state.heads.get(segment.conversationId) ?? [];
      const max = Math.min(segment.maxInclusive, ceiling);
      for (const id of walkRange(heads, segment.minExclusive + 1, max, "descending"))
        return out((state.entries.get(id) as { entry: EntryRecord }).entry);
    }
    return undefined;
  }

  async scanEntries(
    query: EntryQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<EntryRecord>> {
    const state = this.guard(options);
    const scan = "scanEntries";
    checkLimit(limit);
    const order = checkQuery(
      scan,
      query,
      ["conversationId", "minEntryId", "maxEntryId"],
      "descending",
    );
    const conversationId = idField(scan, query, "conversationId", true) as ConversationId;
    const lower = idField(scan, query, "minEntryId", false) ?? 1;
    const upper = idField(scan, query, "maxEntryId", false) ?? Number.MAX_SAFE_INTEGER;
    const after = rangeAfter(decodeIdCursor(scan, query, cursor), order);
    const segments = await entrySegments(conversationId, (id) => state.conversations.get(id));
    if (segments === undefined) return { items: [] };
    // Segments come newest first with disjoint, descending id ranges, so
    // walking them in turn yields one globally ordered sequence.
    if (order === "ascending") segments.reverse();
    function* candidates(): Generator<number> {
      for (const segment of segments ?? []) {
        const min = Math.max(segment.minExclusive + 1, lower, after.min);
        const max = Math.min(segment.maxInclusive, upper, after.max);
        yield* walkRange(state.entries.idsOf(segment.conversationId), min, max, order);
      }
    }
    return collectPage(
      candidates(),
      limit,
      (id) => out((state.entries.get(id) as { entry: EntryRecord }).entry),
      idCursor(scan, query),
    );
  }

  async task(id: TaskId, options?: CallOptions): Promise<TaskRecord | undefined> {
    const state = this.guard(options);
    const found = state.tasks.get(checkId("task id", id));
    return Promise.resolve(found && out(found));
  }

  async scanTasks(
    query: TaskQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<TaskRecord>> {
    const state = this.guard(options);
    const scan = "scanTasks";
    checkLimit(limit);
    const order = checkQuery(
      scan,
      query,
      ["conversationId", "kind", "status", "abortRequested", "background", "owner"],
      "ascending",
    );
    const conversationId = idField(scan, query, "conversationId", false);
    const owner = idField(scan, query, "owner", false);
    const kind = oneOfField<string>(scan, query, "kind", "string");
    const status = oneOfField(scan, query, "status", TASK_STATUSES);
    const abortRequested = oneOfField(scan, query, "abortRequested", BOOLEANS);
    const background = oneOfField(scan, query, "background", BOOLEANS);
    const { min, max } = rangeAfter(decodeIdCursor(scan, query, cursor), order);
    const ids =
      conversationId === undefined ? state.tasks.ids() : state.tasks.idsOf(conversationId);
    const page = collectPage(
      walkRange(ids, min, max, order),
      limit,
      (id) => {
        const t = state.tasks.get(id) as TaskRecord;
        const match =
          (kind === undefined || t.kind === kind) &&
          (status === undefined || t.state.status === status) &&
          (abortRequested === undefined || t.abortRequested === abortRequested) &&
          (background === undefined || t.background === background) &&
          (owner === undefined || t.owner === owner);
        return match ? out(t) : undefined;
      },
      idCursor(scan, query),
    );
    return Promise.resolve(page);
  }

  async submission(id: SubmissionId, options?: CallOptions): Promise<SubmissionRecord | undefined> {
    const state = this.guard(options);
    const found = state.submissions.get(checkId("submission id", id));
    return Promise.resolve(found && out(found));
  }

  async scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<SubmissionRecord>> {
    const state = this.guard(options);
    const scan = "scanSubmissions";
    checkLimit(limit);
    const order = checkQuery(scan, query, ["conversationId", "status"], "ascending");
    const conversationId = idField(scan, query, "conversationId", true) as number;
    const status = oneOfField(scan, query, "status", SUBMISSION_STATUSES);
    const { min, max } = rangeAfter(decodeIdCursor(scan, query, cursor), order);
    const page = collectPage(
      walkRange(state.submissions.idsOf(conversationId), min, max, order),
      limit,
      (id) => {
        const s = state.submissions.get(id) as SubmissionRecord;
        return status === undefined || s.status === status ? out(s) : undefined;
      },
      idCursor(scan, query),
    );
    return Promise.resolve(page);
  }

  async submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
    options?: CallOptions,
  ): Promise<SubmissionRecord | undefined> {
    const state = this.guard(options);
    checkId("conversationId", conversationId);
    if (typeof requestId !== "string")
      throw new StorageRequestError(
        "bad-argument",
        `requestId must be a string, got ${String(requestId)}`,
      );
    const first = state.requests.get(requestKey(conversationId, requestId))?.[0];
    return Promise.resolve(
      first === undefined ? undefined : out(state.submissions.get(first) as SubmissionRecord),
    );
  }

  async findDocument(
    address: DocumentAddress,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<DocumentRecord | undefined> {
    const state = this.guard(options);
    const when = checkAt(at);
    const a = checkAddress(address);
    for (const id of state.addresses.get(addressKey(a)) ?? []) {
      const doc = state.documents.get(id);
      if (doc !== undefined && isLive(doc.record, when)) return Promise.resolve(out(doc.record));
    }
    return undefined;
  }

  async document(
    id: DocumentId,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<MaterializedDocument | undefined> {
    const state = this.guard(options);
    const when = checkAt(at);
    const doc = state.documents.get(checkId("document id", id));
    if (doc === undefined || !isLive(doc.record, when)) return undefined;
    return Promise.resolve(out(readAt(doc, when)));
  }

  async scanDocuments(
    query: DocumentQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<DocumentRecord>> {
    const state = this.guard(options);
    const scan = "scanDocuments";
    checkLimit(limit);
    const order = checkQuery(scan, query, ["scope", "at", "kind"], "ascending");
    let scope: DocumentScope;
    let at: number | "current";
    try {
      scope = checkScope(query.scope);
      at = checkAt(query.at);
    } catch (error) {
      if (error instanceof StorageRequestError)
        throw new StorageRequestError("bad-query", `${scan}: ${error.message}`);
      throw error;
    }
    const kind = oneOfField<string>(scan, query, "kind", "string");
    const { min, max } = rangeAfter(decodeIdCursor(scan, query, cursor), order);
    const page = collectPage(
      walkRange(state.scopes.get(scopeKey(scope)) ?? [], min, max, order),
      limit,
      (id) => {
        const record = state.documents.get(id)?.record;
        if (
          record === undefined ||
          !isLive(record, at) ||
          (kind !== undefined && record.kind !== kind)
        )
          return undefined;
        return out(record);
      },
      idCursor(scan, query),
    );
    return Promise.resolve(page);
  }

  async close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}
