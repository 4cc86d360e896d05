import { StorageClosed, StorageRequestError } from "../domain/errors.js";
import type {
  ConversationId,
  DocumentId,
  EntryId,
  Seq,
  SubmissionId,
  TaskId,
} from "../domain/ids.js";
import { cloneJson, type Json } from "../domain/json.js";
import type {
  ConversationRecord,
  DocumentRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";
import { entryScanRanges, entrySegments } from "./ancestry.js";
import type { IdRange, StorageBackend } from "./backend.js";
import { PlannedCall } from "./commit-call.js";
import { detachBatches } from "./detach.js";
import { isCurrentOnly, isLiveAt } from "./lifetimes.js";
import { historyRetired, historyUnavailable, materializeRevisions } from "./materialize.js";
import type {
  Batch,
  CallOptions,
  CommitResult,
  ConversationQuery,
  Cursor,
  DocumentAddress,
  DocumentQuery,
  EntryQuery,
  MaterializedDocument,
  Page,
  Storage,
  StorageCapabilities,
  SubmissionQuery,
  TaskQuery,
} from "./port.js";
import { checkAt, checkId, encodeCursor } from "./requests.js";
import {
  conversationScan,
  documentScan,
  entryScan,
  submissionScan,
  taskScan,
  type CheckedScan,
} from "./scan-requests.js";
import { checkAddress } from "./scope.js";

const settled = (): void => undefined;
const NO_CAPABILITIES: StorageCapabilities = Object.freeze({});

/** The rows a backend reads for one page: one more than the page holds, proving whether more follow. */
function pageRange(scan: CheckedScan<unknown>): IdRange {
  return { order: scan.order, after: scan.after, limit: scan.limit + 1 };
}

/**
 * The `Storage` port in front of a `StorageBackend`: the policy every
 * backend shares, done once. It rejects calls after `close()`, after a
 * backend failure and with an aborted signal; checks every argument and
 * query; encodes and decodes cursors; copies batches in (strict JSON, write
 * shapes) before `commit` returns and results out; runs `commit` calls one
 * at a time; expands fork ancestry into id ranges; and decides every
 * refusal through the planner (`planBatch`), so a backend only stores.
 *
 * Subclass it to add a backend's own API (a directory, a recovery report),
 * or to wrap a method for tests, calling `super` for the real behaviour.
 */
export class CheckedStorage implements Storage {
  readonly #backend: StorageBackend;
  #closing: Promise<void> | undefined;
  /** Commit calls queued or running; the next one starts when the tail settles. */
  #pending = 0;
  #tail: Promise<void> = Promise.resolve();

  constructor(backend: StorageBackend) {
    this.#backend = backend;
  }

  get capabilities(): StorageCapabilities {
    return this.#backend.capabilities ?? NO_CAPABILITIES;
  }

  /**
   * Throws (so the caller rejects) when closed, failed or already aborted.
   * Subclasses call it before an API of their own (an inspection query).
   */
  protected guard(options?: CallOptions): StorageBackend {
    const backend = this.#backend;
    if (this.#closing !== undefined) throw new StorageClosed(`${backend.name} is closed`);
    const failure = backend.failure?.();
    if (failure !== undefined) throw failure;
    options?.signal?.throwIfAborted();
    return backend;
  }

  #out<T>(value: T): T {
    return this.#backend.freshReads === true ? value : (cloneJson(value as Json) as T);
  }

  #page<T extends { id: number }>(scan: CheckedScan<unknown>, query: object, rows: T[]): Page<T> {
    const more = rows.length > scan.limit;
    const items = (more ? rows.slice(0, scan.limit) : rows).map((row) => this.#out(row));
    if (!more) return { items };
    const last = items[items.length - 1] as T;
    return { items, next: encodeCursor(scan.scan, query, last.id) };
  }

  // The batches are copied before this returns: the caller may mutate them at once.
  commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    let call: PlannedCall;
    try {
      this.guard(options);
      if (!Array.isArray(batches))
        throw new TypeError("commit: batches must be an array of batches");
      if (typeof receive !== "function") throw new TypeError("commit: receive must be a function");
      const { batches: copies, invalid } = detachBatches(batches);
      call = new PlannedCall(copies, invalid);
    } catch (error) {
      // As thrown: an abort rejects with the signal's reason, whatever its type.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      return Promise.reject(error);
    }
    const run = () =>
      this.#commitNow(call, receive as (index: number, seq: number) => void, options);
    const result = this.#pending === 0 ? run() : this.#tail.then(run);
    this.#pending += 1;
    this.#tail = result.then(
      () => void (this.#pending -= 1),
      () => void (this.#pending -= 1),
    );
    return result;
  }

  async #commitNow(
    call: PlannedCall,
    receive: (index: number, seq: number) => void,
    options: CallOptions | undefined,
  ): Promise<CommitResult> {
    const backend = this.#backend;
    // A queued call re-checks: an earlier one may have failed the backend, or the signal fired.
    const failure = backend.failure?.();
    if (failure !== undefined) throw failure;
    options?.signal?.throwIfAborted();
    const outcome = await backend.commit(call);
    return call.finish(outcome, receive, backend.name);
  }

  async mintId(options?: CallOptions): Promise<number> {
    return this.guard(options).mintId();
  }

  async conversation(
    id: ConversationId,
    options?: CallOptions,
  ): Promise<ConversationRecord | undefined> {
    const found = await this.guard(options).conversation(checkId("conversation id", id));
    return found && this.#out(found);
  }

  async scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<ConversationRecord>> {
    const backend = this.guard(options);
    const scan = conversationScan(query, limit, cursor);
    const rows = await backend.scanConversations(scan.filter, pageRange(scan));
    return this.#page(scan, query, rows);
  }

  async entry(
    id: EntryId,
    options?: CallOptions,
  ): Promise<{ entry: EntryRecord; commitSeq: Seq } | undefined> {
    const found = await this.guard(options).entry(checkId("entry id", id));
    return found && { entry: this.#out(found.entry), commitSeq: found.commitSeq as Seq };
  }

  async latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
    options?: CallOptions,
  ): Promise<EntryRecord | undefined> {
    const backend = this.guard(options);
    checkId("conversationId", conversationId);
    const ceiling =
      atOrBefore === undefined ? Number.MAX_SAFE_INTEGER : checkId("atOrBefore", atOrBefore);
    const segments = await entrySegments(conversationId, (id) => backend.conversation(id));
    if (segments === undefined) return undefined;
    const ranges = entryScanRanges(segments, "descending", 1, ceiling);
    if (ranges.length === 0) return undefined;
    const found = await backend.latestHead(ranges);
    return found && this.#out(found);
  }

  async scanEntries(
    query: EntryQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<EntryRecord>> {
    const backend = this.guard(options);
    const scan = entryScan(query, limit, cursor);
    const { conversationId, min, max } = scan.filter;
    // Conversations never change once stored, so walking the ancestry in several reads is consistent.
    const segments = await entrySegments(conversationId as ConversationId, (id) =>
      backend.conversation(id),
    );
    if (segments === undefined) return { items: [] };
    const ranges = entryScanRanges(segments, scan.order, min, max, scan.after);
    if (ranges.length === 0) return { items: [] };
    const rows = await backend.scanEntries(ranges, scan.order, scan.limit + 1);
    return this.#page(scan, query, rows);
  }

  async task(id: TaskId, options?: CallOptions): Promise<TaskRecord | undefined> {
    const found = await this.guard(options).task(checkId("task id", id));
    return found && this.#out(found);
  }

  async scanTasks(
    query: TaskQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<TaskRecord>> {
    const backend = this.guard(options);
    const scan = taskScan(query, limit, cursor);
    const rows = await backend.scanTasks(scan.filter, pageRange(scan));
    return this.#page(scan, query, rows);
  }

  async submission(id: SubmissionId, options?: CallOptions): Promise<SubmissionRecord | undefined> {
    const found = await this.guard(options).submission(checkId("submission id", id));
    return found && this.#out(found);
  }

  async scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<SubmissionRecord>> {
    const backend = this.guard(options);
    const scan = submissionScan(query, limit, cursor);
    const rows = await backend.scanSubmissions(scan.filter, pageRange(scan));
    return this.#page(scan, query, rows);
  }

  async submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
    options?: CallOptions,
  ): Promise<SubmissionRecord | undefined> {
    const backend = this.guard(options);
    checkId("conversationId", conversationId);
    if (typeof requestId !== "string")
      throw new StorageRequestError(
        "bad-argument",
        `requestId must be a string, got ${JSON.stringify(requestId) ?? String(requestId)}`,
      );
    const found = await backend.submissionByRequest(conversationId, requestId);
    return found && this.#out(found);
  }

  async findDocument(
    address: DocumentAddress,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<DocumentRecord | undefined> {
    const backend = this.guard(options);
    const when = checkAt(at);
    const found = await backend.findDocument(checkAddress(address), when);
    return found !== undefined && isLiveAt(found, when) ? this.#out(found) : undefined;
  }

  async document(
    id: DocumentId,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<MaterializedDocument | undefined> {
    const backend = this.guard(options);
    const when = checkAt(at);
    const snapshot = await backend.document(checkId("document id", id), when);
    if (snapshot === undefined || !isLiveAt(snapshot.record, when)) return undefined;
    const { record, newestBaseSeq } = snapshot;
    // Current-only history is unreadable whether or not the backend has reclaimed it yet.
    if (when !== "current" && isCurrentOnly(record)) {
      if (record.retiredAt !== undefined) throw historyRetired(id, when, record.retiredAt);
      if (when < newestBaseSeq) throw historyUnavailable(id, when, newestBaseSeq);
    }
    const value =
      snapshot.value ?? materializeRevisions(id, snapshot.revisions ?? [], snapshot.where);
    return this.#out({
      record,
      version: value.version,
      value: value.value,
      deltasSinceBase: value.deltasSinceBase,
    });
  }

  async scanDocuments(
    query: DocumentQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<DocumentRecord>> {
    const backend = this.guard(options);
    const scan = documentScan(query, limit, cursor);
    const rows = await backend.scanDocuments(scan.filter, pageRange(scan));
    return this.#page(scan, query, rows);
  }

  /** Lets queued commit calls settle, then closes the backend. Idempotent; later calls reject. */
  close(): Promise<void> {
    this.#closing ??= this.#tail.then(settled, settled).then(() => this.#backend.close());
    return this.#closing;
  }
}
