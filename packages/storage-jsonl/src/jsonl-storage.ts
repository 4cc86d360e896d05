import { resolve } from "node:path";
import {
  checkAddress,
  checkAt,
  checkId,
  checkLimit,
  checkQuery,
  checkScope,
  cloneJson,
  isSealedBatches,
  copyJson,
  decodeIdCursor,
  entrySegments,
  idField,
  oneOfField,
  refuse,
  scopeKey,
  StorageClosed,
  StoragePoisoned,
  StorageRequestError,
  type BaseContent,
  type Batch,
  type BatchProblem,
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
  type StorageWrite,
  type SubmissionId,
  type SubmissionQuery,
  type SubmissionRecord,
  type TaskId,
  type TaskQuery,
  type TaskRecord,
} from "@durably/core";
import { AppendHandles } from "./append-handles.js";
import { applyBatch } from "./apply-batch.js";
import { isTerminal, serializeCall, writeCall } from "./commit-writer.js";
import { readDocumentAt } from "./document-history.js";
import type { AppendFile, FileLock, FileSystem } from "./file-system.js";
import {
  addressKey,
  isLive,
  requestKey,
  type DocumentState,
  type JsonlState,
} from "./jsonl-state.js";
import { LOCK_FILE, MAIN_FILE, taskFile } from "./line-format.js";
import { Mutex } from "./mutex.js";
import { nodeFileSystem } from "./node-file-system.js";
import { collectPage, rangeAfter } from "./pages.js";
import { CallOverlay, prepareBatch, type Current, type PreparedBatch } from "./prepare-batch.js";
import { removeSidecar, rewriteDocument, worthRewriting, type ReclaimContext } from "./reclaim.js";
import { recover, type RecoveryReport } from "./recovery.js";
import { SerialQueue } from "./serial-queue.js";
import { walkRange } from "@durably/core";

export interface JsonlStorageOptions {
  /**
   * Flush (fsync) sidecars, then main.jsonl, before a commit resolves, so
   * acknowledged commits survive power loss. Default `false`: acknowledged
   * commits survive a process crash, not necessarily an OS crash.
   */
  fsync?: boolean;
  /** The file system to use (default: `nodeFileSystem`). Tests inject faults here. */
  fs?: FileSystem;
  /** Most sidecar append handles kept open between commits (default 64). */
  maxOpenFiles?: number;
}

const TASK_STATUSES = ["pending", "running", "waiting", "completing", "terminal"] as const;
const SUBMISSION_STATUSES = ["queued", "placed", "done", "unanswered"] as const;
const BOOLEANS = [true, false] as const;

/** Hands out a private copy; index internals never leave. */
function out<T>(value: T): T {
  return cloneJson(value as Json) as T;
}

type CopiedBatch = { writes: StorageWrite[] } | { problem: BatchProblem };

/** Detaches a batch from the caller; a value that is not strict JSON refuses the batch, naming the path. */
function copyBatch(input: unknown, batchIndex: number): CopiedBatch {
  if (!Array.isArray(input))
    return {
      problem: {
        writeIndex: 0,
        reason: "invalid-write",
        message: "a batch must be an array of writes",
      },
    };
  const writes: StorageWrite[] = [];
  for (let i = 0; i < input.length; i++) {
    try {
      writes.push(copyJson(input[i], `batches[${batchIndex}][${i}]`) as unknown as StorageWrite);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      return { problem: { writeIndex: i, reason: "invalid-write", message: error.message } };
    }
  }
  return { writes };
}

/**
 * Opens (creating if needed) a JSONL storage in `directory`: takes the
 * single-owner lock, recovers the confirmed state from the files, and is
 * ready. Fails with `StorageLocked` while another live process has it open,
 * and with `StorageCorrupted` (naming file and line) when confirmed data is
 * damaged or missing.
 */
export async function openJsonlStorage(
  directory: string,
  options: JsonlStorageOptions = {},
): Promise<JsonlStorage> {
  const fs = options.fs ?? nodeFileSystem;
  const fsync = options.fsync ?? false;
  const dir = resolve(directory);
  await fs.mkdir(dir);
  const lock = await fs.lock(`${dir}/${LOCK_FILE}`);
  let main: AppendFile | undefined;
  try {
    const { state, report } = await recover(fs, dir, fsync);
    main = await fs.openAppend(`${dir}/${MAIN_FILE}`);
    const storage = new JsonlStorage(
      fs,
      dir,
      fsync,
      lock,
      main,
      state,
      report,
      options.maxOpenFiles ?? 64,
    );
    await storage.reclaimAfterOpen();
    return storage;
  } catch (error) {
    await main?.close().catch(() => undefined);
    await lock.release().catch(() => undefined);
    throw error;
  }
}

/** The Storage port over append-only JSONL files. Create it with `openJsonlStorage`. */
export class JsonlStorage implements Storage {
  readonly capabilities: StorageCapabilities = Object.freeze({ persistent: true });
  private readonly queue = new SerialQueue();
  /** Serialises rewrites of current-only sidecars with the history reads that depend on their offsets. */
  private readonly rewriteGate = new Mutex();
  private readonly handles: AppendHandles;
  private poisonCause: unknown;
  private poisoned = false;
  private closing: Promise<void> | undefined;
  /** Files whose reclamation a commit authorised. */
  private readonly reclaimable = new Set<string>();

  /** @internal use `openJsonlStorage` */
  constructor(
    private readonly fs: FileSystem,
    /** The absolute directory holding the files. */
    readonly directory: string,
    private readonly fsync: boolean,
    private readonly lock: FileLock,
    private readonly main: AppendFile,
    private readonly state: JsonlState,
    /** What open found and repaired. */
    readonly recovery: RecoveryReport,
    maxOpenFiles: number,
  ) {
    this.handles = new AppendHandles(fs, directory, maxOpenFiles);
  }

  private get reclaimContext(): ReclaimContext {
    return {
      fs: this.fs,
      directory: this.directory,
      state: this.state,
      handles: this.handles,
      fsync: this.fsync,
    };
  }

  /** Throws (so the async caller rejects) when closed, poisoned or already aborted. */
  private guard(options: CallOptions | undefined): JsonlState {
    if (this.closing !== undefined)
      throw new StorageClosed(`JSONL storage ${this.directory} is closed`);
    if (this.poisoned) throw this.poisonError();
    options?.signal?.throwIfAborted();
    return this.state;
  }

  private poisonError(): StoragePoisoned {
    return new StoragePoisoned(
      `JSONL storage ${this.directory} saw an uncertain write failure and accepts no more calls; close and reopen it to recover the confirmed state`,
      { cause: this.poisonCause },
    );
  }

  private poison(cause: unknown): StoragePoisoned {
    if (!this.poisoned) {
      this.poisoned = true;
      this.poisonCause = cause;
    }
    return this.poisonError();
  }

  // Batches are copied synchronously, before the first await, so the caller
  // may mutate them as soon as `commit` returns its promise.
  async commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    this.guard(options);
    if (!Array.isArray(batches)) throw new TypeError("commit: batches must be an array of batches");
    if (typeof receive !== "function") throw new TypeError("commit: receive must be a function");
    const copies: CopiedBatch[] = [];
    // The Session's own batches hold frozen values it checked already: kept, not copied again.
    const sealed = isSealedBatches(batches);
    for (let b = 0; b < batches.length; b++) {
      const copy = sealed ? { writes: batches[b] as StorageWrite[] } : copyBatch(batches[b], b);
      copies.push(copy);
      if ("problem" in copy) break;
    }
    const result = this.queue.run(() => this.commitNow(copies, receive, options));
    void result.then(
      () => this.scheduleReclaim(),
      () => undefined,
    );
    return result;
  }

  private async commitNow(
    copies: readonly CopiedBatch[],
    receive: (index: number, seq: Seq) => void,
    options: CallOptions | undefined,
  ): Promise<CommitResult> {
    if (this.poisoned) throw this.poisonError();
    options?.signal?.throwIfAborted();
    const state = this.state;
    const overlay = new CallOverlay();
    const prepared: PreparedBatch[] = [];
    let refused: BatchRefused | undefined;
    for (let b = 0; b < copies.length; b++) {
      const copy = copies[b] as CopiedBatch;
      if ("problem" in copy) {
        refused = refuse(b, copy.problem);
        break;
      }
      const seq = state.lastSeq + 1 + prepared.length;
      const result = await prepareBatch(state, overlay, copy.writes, seq, (_i, source, current) =>
        this.copySource(source, current),
      );
      if ("problem" in result) {
        refused = refuse(b, result.problem);
        break;
      }
      prepared.push(result.batch);
    }
    if (prepared.length > 0) {
      const call = serializeCall(state, prepared);
      try {
        await writeCall(this.fs, this.directory, this.handles, this.main, call, this.fsync);
        await this.handles.trim();
      } catch (error) {
        throw this.poison(error);
      }
      // Publish: the markers are in main.jsonl.
      for (const [file, chunk] of call.sidecars) state.files.set(file, chunk.extent);
      prepared.forEach((batch, i) => {
        applyBatch(state, batch, call.placements[i] ?? []);
        this.noteReclaimable(batch);
      });
      state.persistedHighWater = call.persistedHighWater;
      prepared.forEach((batch, i) => receive(i, batch.seq as Seq));
    }
    return refused === undefined
      ? { stored: prepared.length }
      : { stored: prepared.length, refused };
  }

  /** The base a `document.copy` starts from, or why there is none. */
  private async copySource(
    source: { id: number; at: number | "current" },
    current: Current | undefined,
  ): Promise<BaseContent | string> {
    if (source.at === "current") {
      if (current === undefined)
        return `source document ${source.id} does not exist or is not live at current`;
      return { kind: "base", version: current.version, value: current.value };
    }
    const at = source.at;
    const doc = this.state.documents.get(source.id);
    if (doc === undefined) return `source document ${source.id} does not exist`;
    if (at > this.state.lastSeq)
      return `source seq ${at} is not committed yet (newest seq is ${this.state.lastSeq})`;
    if (!isLive(doc.record, at)) return `source document ${source.id} is not live at seq ${at}`;
    try {
      const read = await this.readDocument(doc, at);
      return { kind: "base", version: read.version, value: read.value };
    } catch (error) {
      if (error instanceof StorageRequestError)
        return `source document ${source.id} at seq ${at}: ${error.message}`;
      throw error;
    }
  }

  private readDocument(doc: DocumentState, at: number | "current"): Promise<MaterializedDocument> {
    // Only current-only files are ever rewritten, so only their history reads wait for rewrites.
    if (doc.currentOnly && at !== "current")
      return this.rewriteGate.lock(() => readDocumentAt(this.fs, this.directory, doc, at));
    return readDocumentAt(this.fs, this.directory, doc, at);
  }

  private noteReclaimable(batch: PreparedBatch): void {
    for (const write of batch.writes) {
      if (write.type === "task" && isTerminal(write.value))
        this.reclaimable.add(taskFile(write.value.id));
      else if (write.type === "document.change" && write.content?.kind === "base")
        this.reclaimable.add(`doc:${write.id}`);
      else if (write.type === "document.retire") this.reclaimable.add(`doc:${write.id}`);
    }
  }

  private scheduleReclaim(): void {
    // Once closing, close() runs the pending reclamation itself before closing the files.
    if (this.reclaimable.size === 0 || this.poisoned || this.closing !== undefined) return;
    void this.queue.run(() => this.reclaim());
  }

  /** Runs the reclamation earlier commits authorised; their markers are already in main.jsonl (and flushed with fsync). */
  private async reclaim(): Promise<void> {
    if (this.poisoned || this.reclaimable.size === 0) return;
    const pending = [...this.reclaimable];
    this.reclaimable.clear();
    try {
      for (const item of pending) {
        if (!item.startsWith("doc:")) {
          const id = Number(/^task-([0-9]+)\.jsonl$/.exec(item)?.[1]);
          const task = this.state.tasks.get(id);
          if (task !== undefined && isTerminal(task))
            await removeSidecar(this.reclaimContext, item);
          continue;
        }
        const doc = this.state.documents.get(Number(item.slice(4)));
        if (doc === undefined || !doc.currentOnly) continue;
        if (doc.record.retiredAt !== undefined) await removeSidecar(this.reclaimContext, doc.file);
        else if (worthRewriting(this.state, doc))
          await this.rewriteGate.lock(() => rewriteDocument(this.reclaimContext, doc));
      }
    } catch (error) {
      this.poison(error);
    }
  }

  /** @internal Reclaims what a crash left unreclaimed (open runs it once). */
  async reclaimAfterOpen(): Promise<void> {
    for (const doc of this.state.documents.values())
      if (doc.currentOnly) this.reclaimable.add(`doc:${doc.record.id}`);
    await this.queue.run(() => this.reclaim());
    if (this.poisoned) throw this.poisonError();
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
    return Promise.resolve(
      collectPage(
        walkRange(state.conversations.ids(), min, max, order),
        limit,
        (id) => {
          const c = state.conversations.get(id) as ConversationRecord;
          return owner === undefined || c.owner?.taskId === owner ? out(c) : undefined;
        },
        scan,
        query,
      ),
    );
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
      scan,
      query,
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
    return Promise.resolve(
      collectPage(
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
        scan,
        query,
      ),
    );
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
    return Promise.resolve(
      collectPage(
        walkRange(state.submissions.idsOf(conversationId), min, max, order),
        limit,
        (id) => {
          const s = state.submissions.get(id) as SubmissionRecord;
          return status === undefined || s.status === status ? out(s) : undefined;
        },
        scan,
        query,
      ),
    );
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
    return out(await this.readDocument(doc, when));
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
    return Promise.resolve(
      collectPage(
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
        scan,
        query,
      ),
    );
  }

  /** Lets queued commits settle, closes every file and releases the lock. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.queue.run(() => this.reclaim());
      try {
        await this.handles.closeAll();
        await this.main.close();
      } finally {
        await this.lock.release();
      }
    })();
    return this.closing;
  }
}
