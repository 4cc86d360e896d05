import {
  isSealedBatches,
  StorageClosed,
  StorageRequestError,
  type Batch,
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
  type EntryId,
  type EntryQuery,
  type EntryRecord,
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
} from "@durably/core";
import { commitPlanned, firstBatchRefusal, type Counters } from "./commit-batches.js";
import { DocumentReads } from "./document-reads.js";
import { CurrentValues } from "./documents.js";
import { guarded } from "./driver-errors.js";
import { OPEN_CHECKS, type OpenCheck } from "./open-check.js";
import { finalCheckpoint, takeOwnership } from "./ownership.js";
import { planBatch, type PlannedBatch } from "./plan-batch.js";
import { RecordReads } from "./record-reads.js";
import { RowReader } from "./rows.js";
import type { SqliteDatabase, SqlValue } from "./sqlite-database.js";

export type SynchronousMode = "normal" | "full";

export interface SqliteStorageSettings {
  /** Names the database in error messages (the file path). */
  location: string;
  /** `"normal"` (default): process crashes lose nothing acknowledged. `"full"`: power loss neither. */
  synchronous?: SynchronousMode;
  /** Milliseconds SQLite waits on its own internal locks once the storage owns the file. Default 5000. */
  busyTimeoutMs?: number;
  /** False for `:memory:` databases. Default true. */
  persistent?: boolean;
  /**
   * The structural check at open: `"quick"` (default, `PRAGMA quick_check`),
   * `"full"` (`PRAGMA integrity_check`, which also compares indexes with
   * their tables) or `"none"`. See the README for what skipping it gives up.
   */
  openCheck?: OpenCheck;
}

/**
 * The Storage contract on SQLite, through the `SqliteDatabase` facade.
 * Open it with `openSqliteStorage(path)` (better-sqlite3) or
 * `SqliteStorage.open(database, settings)` for another driver.
 */
export class SqliteStorage implements Storage {
  readonly capabilities: StorageCapabilities;
  readonly location: string;
  readonly #db: SqliteDatabase;
  readonly #rows: RowReader;
  readonly #values = new CurrentValues();
  readonly #records: RecordReads;
  readonly #documents: DocumentReads;
  readonly #conversations = new Set<number>();
  #counters: Counters;
  #nextId: number;
  #closed = false;
  #writer: Promise<unknown> = Promise.resolve();

  private constructor(
    db: SqliteDatabase,
    location: string,
    counters: Counters,
    persistent: boolean,
  ) {
    this.#db = db;
    this.location = location;
    this.#rows = new RowReader(location);
    this.#records = new RecordReads(db, this.#rows);
    this.#documents = new DocumentReads(db, this.#rows, this.#values);
    this.#counters = counters;
    this.#nextId = Math.max(counters.persistedHighWater + 1, 2);
    this.capabilities = { persistent };
  }

  /**
   * Takes ownership of the database (exclusive lock, WAL, schema migrated
   * forward in one transaction, counters loaded and verified). The database
   * is closed again if any step fails.
   */
  static async open(db: SqliteDatabase, settings: SqliteStorageSettings): Promise<SqliteStorage> {
    const { location } = settings;
    const synchronous = settings.synchronous ?? "normal";
    if (synchronous !== "normal" && synchronous !== "full")
      throw new TypeError(
        `synchronous must be "normal" or "full", got ${JSON.stringify(synchronous)}`,
      );
    const busyTimeoutMs = settings.busyTimeoutMs ?? 5000;
    const openCheck = settings.openCheck ?? "quick";
    if (!OPEN_CHECKS.includes(openCheck))
      throw new TypeError(
        `openCheck must be "quick", "full" or "none", got ${JSON.stringify(openCheck)}`,
      );
    const persistent = settings.persistent ?? true;
    try {
      const counters = await takeOwnership(db, {
        location,
        synchronous,
        busyTimeoutMs,
        persistent,
        openCheck,
      });
      return new SqliteStorage(db, location, counters, persistent);
    } catch (error) {
      await db.close().catch(() => undefined);
      throw error;
    }
  }

  #check(options: CallOptions | undefined): void {
    if (this.#closed) throw new StorageClosed(`the SQLite storage at ${this.location} is closed`);
    options?.signal?.throwIfAborted();
  }

  /**
   * Checks the storage is open and the call not aborted, then starts the
   * read; a failed check rejects. Not an async function itself: a read
   * costs one promise layer (the reader's), not two.
   */
  #read<T>(options: CallOptions | undefined, read: () => Promise<T>): Promise<T> {
    try {
      this.#check(options);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return read();
  }

  async commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    this.#check(options);
    if (!Array.isArray(batches)) throw new TypeError("commit: batches must be an array of batches");
    // Copy and serialise before the first await: the caller may reuse its objects at once.
    // The Session's own batches are checked and frozen already: serialised, not copied.
    const sealed = isSealedBatches(batches);
    const plans = batches.map((batch, i) => planBatch(batch, i, sealed));
    if (plans.length === 0) return { stored: 0 };
    // Calls run one after another: each starts from the counters the previous one adopted.
    const run = this.#writer.then(() => this.#commitPlans(plans, receive));
    this.#writer = run.catch(() => undefined);
    return run;
  }

  async #commitPlans(
    plans: PlannedBatch[],
    receive: (index: number, seq: Seq) => void,
  ): Promise<CommitResult> {
    const counters = {
      ...this.#counters,
      highWater: Math.max(this.#counters.highWater, this.#nextId - 1),
    };
    let outcome;
    try {
      outcome = await guarded(this.location, "committing", {}, () =>
        this.#db.transaction((db) =>
          commitPlanned(db, this.#rows, plans, counters, this.#values, this.#conversations),
        ),
      );
    } catch (error) {
      const refused = firstBatchRefusal(error);
      if (refused === undefined) throw error;
      return { stored: 0, refused };
    }
    this.#counters = {
      nextSeq: outcome.nextSeq,
      persistedHighWater: outcome.persistedHighWater,
      highWater: outcome.highWater,
    };
    if (outcome.highWater >= this.#nextId) this.#nextId = outcome.highWater + 1;
    // Bounded memory: forgetting known conversations only costs a lookup later.
    if (this.#conversations.size + outcome.conversations.size > 65_536) this.#conversations.clear();
    for (const id of outcome.conversations) this.#conversations.add(id);
    for (const [id, value] of outcome.values) {
      if (value === null) this.#values.delete(id);
      else this.#values.set(id, value);
    }
    outcome.seqs.forEach((seq, index) => receive(index, seq as Seq));
    return outcome.refused
      ? { stored: outcome.seqs.length, refused: outcome.refused }
      : { stored: outcome.seqs.length };
  }

  mintId(options?: CallOptions): Promise<number> {
    try {
      this.#check(options);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const id = this.#nextId;
    this.#nextId = id + 1;
    return Promise.resolve(id);
  }

  conversation(id: ConversationId, options?: CallOptions) {
    return this.#read(options, () => this.#records.conversation(id));
  }

  scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<ConversationRecord>> {
    return this.#read(options, () => this.#records.scanConversations(query, limit, cursor));
  }

  entry(id: EntryId, options?: CallOptions) {
    return this.#read(options, () => this.#records.entry(id));
  }

  latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
    options?: CallOptions,
  ): Promise<EntryRecord | undefined> {
    return this.#read(options, () => this.#records.latestHead(conversationId, atOrBefore));
  }

  scanEntries(
    query: EntryQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<EntryRecord>> {
    return this.#read(options, () => this.#records.scanEntries(query, limit, cursor));
  }

  task(id: TaskId, options?: CallOptions): Promise<TaskRecord | undefined> {
    return this.#read(options, () => this.#records.task(id));
  }

  scanTasks(
    query: TaskQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<TaskRecord>> {
    return this.#read(options, () => this.#records.scanTasks(query, limit, cursor));
  }

  submission(id: SubmissionId, options?: CallOptions): Promise<SubmissionRecord | undefined> {
    return this.#read(options, () => this.#records.submission(id));
  }

  scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<SubmissionRecord>> {
    return this.#read(options, () => this.#records.scanSubmissions(query, limit, cursor));
  }

  submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
    options?: CallOptions,
  ): Promise<SubmissionRecord | undefined> {
    return this.#read(options, () => this.#records.submissionByRequest(conversationId, requestId));
  }

  findDocument(
    address: DocumentAddress,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<DocumentRecord | undefined> {
    return this.#read(options, () => this.#documents.findDocument(address, at));
  }

  document(
    id: DocumentId,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<MaterializedDocument | undefined> {
    return this.#read(options, () => this.#documents.document(id, at));
  }

  scanDocuments(
    query: DocumentQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<DocumentRecord>> {
    return this.#read(options, () => this.#documents.scanDocuments(query, limit, cursor));
  }

  /**
   * Runs a read-only `SELECT` (or `WITH … SELECT`) and returns its rows, for
   * showing what is stored (e.g. `ENTRY_ROWS_SQL`) without closing the
   * storage. It never writes: anything else is refused. Rows come back as
   * stored, without checksum verification.
   */
  async inspect<Row = Record<string, SqlValue>>(
    sql: string,
    params: readonly SqlValue[] = [],
  ): Promise<Row[]> {
    this.#check(undefined);
    if (!/^\s*(SELECT|WITH)\b/i.test(sql) || /;\s*\S/.test(sql))
      throw new StorageRequestError("bad-argument", "inspect runs a single SELECT statement only");
    return this.#db.all<Row>(sql, params);
  }

  /**
   * Lets commits already handed to the writer finish, checkpoints the
   * write-ahead log into the file and truncates it, then releases the file.
   * If the checkpoint fails (a disk error), the file is still released and
   * close rejects with `StorageIOError` (or `StorageCorrupted`): the commits
   * stay in the log, which the next open replays.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#writer;
    const failure = this.capabilities.persistent
      ? await finalCheckpoint(this.#db, this.location)
      : undefined;
    await guarded(this.location, "closing", {}, () => this.#db.close());
    if (failure !== undefined) throw failure;
  }
}
