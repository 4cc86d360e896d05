import {
  entryScanRanges,
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
  pageFromRows,
  scopeKey,
  startAfter,
  StorageClosed,
  StorageCorrupted,
  StorageLocked,
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
import {
  commitPlanned,
  firstBatchRefusal,
  NEWEST_AT_ADDRESS,
  planBatch,
  type Counters,
  type PlannedBatch,
} from "./commit-batches.js";
import { CurrentValues, isLiveRow, readDocumentRows, SELECT_DOCUMENT } from "./documents.js";
import { DOCUMENT_COLUMNS, documentRecord, parseRecord, type DocumentRow } from "./rows.js";
import { migrate } from "./schema.js";
import {
  isBusyError,
  isNotDatabaseError,
  type SqliteDatabase,
  type SqliteStatements,
  type SqlValue,
} from "./sqlite-database.js";

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
}

type IdRecordRow = { id: number; record: string };

const TASK_STATUSES = ["pending", "running", "waiting", "completing", "terminal"] as const;
const SUBMISSION_STATUSES = ["queued", "placed", "done", "unanswered"] as const;
const BOOLEANS = [true, false] as const;
/** Task query fields with their columns, most selective first (the first present one drives the index). */
const TASK_FILTERS = [
  ["owner", "owner"],
  ["conversationId", "conversation_id"],
  ["status", "status"],
  ["kind", "kind"],
  ["abortRequested", "abort_requested"],
  ["background", "background"],
] as const;

const SELECT_CONVERSATION = "SELECT record FROM conversations WHERE id = ?";
const SELECT_ENTRY = "SELECT commit_seq, record FROM entries WHERE id = ?";
const SELECT_TASK = "SELECT record FROM tasks WHERE id = ?";
const SELECT_SUBMISSION = "SELECT record FROM submissions WHERE id = ?";
const SUBMISSION_BY_REQUEST =
  "SELECT id, record FROM submissions WHERE conversation_id = ? AND request_id = ? ORDER BY id LIMIT 1";
const HEAD_IN_RANGE =
  "SELECT id, record FROM entries WHERE conversation_id = ? AND id > ? AND id <= ? AND json_extract(record, '$.head') IS NOT NULL ORDER BY id DESC LIMIT 1";
const ADDRESS_AT = `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE kind = ? AND scope = ? AND key IS ? AND created_at <= ? ORDER BY created_at DESC LIMIT 1`;

function orderSql(order: "ascending" | "descending"): { cmp: string; dir: string } {
  return order === "ascending" ? { cmp: ">", dir: "ASC" } : { cmp: "<", dir: "DESC" };
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
  readonly #values = new CurrentValues();
  readonly #conversations = new Set<number>();
  readonly #sql = new Map<string, string>();
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
    this.#counters = counters;
    this.#nextId = Math.max(counters.persistedHighWater + 1, 2);
    this.capabilities = { persistent };
  }

  /**
   * Takes ownership of the database: exclusive locking (released by the
   * kernel when the process dies), WAL, the synchronous mode, then migrates
   * the schema forward in one transaction and loads the counters. The
   * database is closed again if any step fails.
   */
  static async open(db: SqliteDatabase, settings: SqliteStorageSettings): Promise<SqliteStorage> {
    const { location } = settings;
    const synchronous = settings.synchronous ?? "normal";
    if (synchronous !== "normal" && synchronous !== "full")
      throw new TypeError(
        `synchronous must be "normal" or "full", got ${JSON.stringify(synchronous)}`,
      );
    const busyTimeoutMs = settings.busyTimeoutMs ?? 5000;
    try {
      // No waiting while taking the lock: a live owner means "fail now, clearly".
      await db.exec("PRAGMA busy_timeout = 0");
      await db.exec("PRAGMA locking_mode = EXCLUSIVE");
      await db.get("PRAGMA journal_mode = WAL");
      const counters = await db.transaction((tx) => {
        migrate(tx, location);
        return readCounters(tx, location);
      });
      await db.exec(`PRAGMA synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`);
      await db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
      return new SqliteStorage(db, location, counters, settings.persistent ?? true);
    } catch (error) {
      await db.close().catch(() => undefined);
      if (isBusyError(error))
        throw new StorageLocked(
          `${location} is owned by another open storage (another process, or this one); close it first`,
          {
            holder: location,
            cause: error,
          },
        );
      if (isNotDatabaseError(error))
        throw new StorageCorrupted(
          `${location} is not a readable SQLite database`,
          { file: location },
          { cause: error },
        );
      throw error;
    }
  }

  #check(options: CallOptions | undefined): void {
    if (this.#closed) throw new StorageClosed(`the SQLite storage at ${this.location} is closed`);
    options?.signal?.throwIfAborted();
  }

  async commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    this.#check(options);
    if (!Array.isArray(batches)) throw new TypeError("commit: batches must be an array of batches");
    // Copy and serialise before the first await: the caller may reuse its objects at once.
    const plans = batches.map((batch, i) => planBatch(batch, i));
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
      outcome = await this.#db.transaction((db) =>
        commitPlanned(db, plans, counters, this.#values, this.#conversations),
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

  async conversation(
    id: ConversationId,
    options?: CallOptions,
  ): Promise<ConversationRecord | undefined> {
    this.#check(options);
    checkId("conversation id", id);
    const row = await this.#db.get<{ record: string }>(SELECT_CONVERSATION, [id]);
    return row === undefined
      ? undefined
      : parseRecord<ConversationRecord>("conversations", id, row.record);
  }

  async scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<ConversationRecord>> {
    this.#check(options);
    const scan = "scanConversations";
    const order = checkQuery(scan, query, ["ownerTaskId"], "ascending");
    checkLimit(limit);
    const owner = idField(scan, query, "ownerTaskId", false);
    const after = startAfter(order, decodeIdCursor(scan, query, cursor));
    const { cmp, dir } = orderSql(order);
    const where = owner === undefined ? `id ${cmp} ?` : `owner_task_id = ? AND id ${cmp} ?`;
    const params: SqlValue[] = owner === undefined ? [after, limit + 1] : [owner, after, limit + 1];
    const rows = await this.#db.all<IdRecordRow>(
      `SELECT id, record FROM conversations WHERE ${where} ORDER BY id ${dir} LIMIT ?`,
      params,
    );
    return pageFromRows(scan, query, limit, rows, (r) =>
      parseRecord<ConversationRecord>("conversations", r.id, r.record),
    );
  }

  async entry(
    id: EntryId,
    options?: CallOptions,
  ): Promise<{ entry: EntryRecord; commitSeq: Seq } | undefined> {
    this.#check(options);
    checkId("entry id", id);
    const row = await this.#db.get<{ commit_seq: number; record: string }>(SELECT_ENTRY, [id]);
    if (row === undefined) return undefined;
    return {
      entry: parseRecord<EntryRecord>("entries", id, row.record),
      commitSeq: row.commit_seq as Seq,
    };
  }

  #segments(conversationId: number) {
    // Conversations are immutable once stored, so walking them in several reads is consistent.
    return entrySegments(conversationId as ConversationId, (id) => this.conversation(id));
  }

  async latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
    options?: CallOptions,
  ): Promise<EntryRecord | undefined> {
    this.#check(options);
    checkId("conversation id", conversationId);
    if (atOrBefore !== undefined) checkId("atOrBefore", atOrBefore);
    const segments = await this.#segments(conversationId);
    if (segments === undefined) return undefined;
    const limit = atOrBefore ?? Number.MAX_SAFE_INTEGER;
    return this.#db.transaction(
      (db) => {
        for (const range of entryScanRanges(segments, "descending", 1, limit)) {
          const row = db.get<IdRecordRow>(HEAD_IN_RANGE, [
            range.conversationId,
            range.lower,
            range.upper,
          ]);
          if (row !== undefined) return parseRecord<EntryRecord>("entries", row.id, row.record);
        }
        return undefined;
      },
      { readOnly: true },
    );
  }

  async scanEntries(
    query: EntryQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<EntryRecord>> {
    this.#check(options);
    const scan = "scanEntries";
    const order = checkQuery(
      scan,
      query,
      ["conversationId", "minEntryId", "maxEntryId"],
      "descending",
    );
    checkLimit(limit);
    const conversationId = idField(scan, query, "conversationId", true) as number;
    const min = idField(scan, query, "minEntryId", false) ?? 1;
    const max = idField(scan, query, "maxEntryId", false) ?? Number.MAX_SAFE_INTEGER;
    const position = decodeIdCursor(scan, query, cursor);
    const segments = await this.#segments(conversationId);
    if (segments === undefined) return { items: [] };
    const ranges = entryScanRanges(segments, order, min, max, position);
    const sql =
      order === "descending"
        ? "SELECT id, record FROM entries WHERE conversation_id = ? AND id > ? AND id <= ? ORDER BY id DESC LIMIT ?"
        : "SELECT id, record FROM entries WHERE conversation_id = ? AND id > ? AND id <= ? ORDER BY id ASC LIMIT ?";
    const rows = await this.#db.transaction(
      (db) => {
        const found: IdRecordRow[] = [];
        for (const range of ranges) {
          found.push(
            ...db.all<IdRecordRow>(sql, [
              range.conversationId,
              range.lower,
              range.upper,
              limit + 1 - found.length,
            ]),
          );
          if (found.length > limit) break;
        }
        return found;
      },
      { readOnly: true },
    );
    return pageFromRows(scan, query, limit, rows, (r) =>
      parseRecord<EntryRecord>("entries", r.id, r.record),
    );
  }

  async task(id: TaskId, options?: CallOptions): Promise<TaskRecord | undefined> {
    this.#check(options);
    checkId("task id", id);
    const row = await this.#db.get<{ record: string }>(SELECT_TASK, [id]);
    return row === undefined ? undefined : parseRecord<TaskRecord>("tasks", id, row.record);
  }

  async scanTasks(
    query: TaskQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<TaskRecord>> {
    this.#check(options);
    const scan = "scanTasks";
    const order = checkQuery(
      scan,
      query,
      TASK_FILTERS.map(([field]) => field),
      "ascending",
    );
    checkLimit(limit);
    const values: (SqlValue | undefined)[] = [
      idField(scan, query, "owner", false),
      idField(scan, query, "conversationId", false),
      oneOfField(scan, query, "status", TASK_STATUSES),
      oneOfField<string>(scan, query, "kind", "string"),
      booleanFlag(oneOfField(scan, query, "abortRequested", BOOLEANS)),
      booleanFlag(oneOfField(scan, query, "background", BOOLEANS)),
    ];
    const after = startAfter(order, decodeIdCursor(scan, query, cursor));
    const params: SqlValue[] = [];
    let shape = order;
    values.forEach((value, i) => {
      if (value === undefined) return;
      params.push(value);
      shape += `,${i}`;
    });
    params.push(after, limit + 1);
    const sql = this.#cachedSql(`tasks:${shape}`, () => {
      const { cmp, dir } = orderSql(order);
      // Without ANALYZE statistics SQLite may pick any of the equality indexes; steer it to the
      // most selective field present and keep the others out of index choice with unary "+".
      let indexed = false;
      const terms: string[] = [];
      TASK_FILTERS.forEach(([, column], i) => {
        if (values[i] === undefined) return;
        terms.push(`${indexed ? "+" : ""}${column} = ?`);
        indexed = true;
      });
      terms.push(`id ${cmp} ?`);
      return `SELECT id, record FROM tasks WHERE ${terms.join(" AND ")} ORDER BY id ${dir} LIMIT ?`;
    });
    const rows = await this.#db.all<IdRecordRow>(sql, params);
    return pageFromRows(scan, query, limit, rows, (r) =>
      parseRecord<TaskRecord>("tasks", r.id, r.record),
    );
  }

  async submission(id: SubmissionId, options?: CallOptions): Promise<SubmissionRecord | undefined> {
    this.#check(options);
    checkId("submission id", id);
    const row = await this.#db.get<{ record: string }>(SELECT_SUBMISSION, [id]);
    return row === undefined
      ? undefined
      : parseRecord<SubmissionRecord>("submissions", id, row.record);
  }

  async scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<SubmissionRecord>> {
    this.#check(options);
    const scan = "scanSubmissions";
    const order = checkQuery(scan, query, ["conversationId", "status"], "ascending");
    checkLimit(limit);
    const conversationId = idField(scan, query, "conversationId", true) as number;
    const status = oneOfField(scan, query, "status", SUBMISSION_STATUSES);
    const after = startAfter(order, decodeIdCursor(scan, query, cursor));
    const { cmp, dir } = orderSql(order);
    const where =
      status === undefined
        ? `conversation_id = ? AND id ${cmp} ?`
        : `conversation_id = ? AND status = ? AND id ${cmp} ?`;
    const params: SqlValue[] =
      status === undefined
        ? [conversationId, after, limit + 1]
        : [conversationId, status, after, limit + 1];
    const rows = await this.#db.all<IdRecordRow>(
      `SELECT id, record FROM submissions WHERE ${where} ORDER BY id ${dir} LIMIT ?`,
      params,
    );
    return pageFromRows(scan, query, limit, rows, (r) =>
      parseRecord<SubmissionRecord>("submissions", r.id, r.record),
    );
  }

  async submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
    options?: CallOptions,
  ): Promise<SubmissionRecord | undefined> {
    this.#check(options);
    checkId("conversation id", conversationId);
    if (typeof requestId !== "string")
      throw new StorageRequestError(
        "bad-argument",
        `requestId must be a string, got ${JSON.stringify(requestId)}`,
      );
    const row = await this.#db.get<IdRecordRow>(SUBMISSION_BY_REQUEST, [conversationId, requestId]);
    return row === undefined
      ? undefined
      : parseRecord<SubmissionRecord>("submissions", row.id, row.record);
  }

  async findDocument(
    address: DocumentAddress,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<DocumentRecord | undefined> {
    this.#check(options);
    const a = checkAddress(address);
    const scope = scopeKey(a.scope);
    const when = checkAt(at);
    const key = a.key ?? null;
    if (when === "current") {
      const newest = await this.#db.get<{ id: number; retired_at: number | null }>(
        NEWEST_AT_ADDRESS,
        [a.kind, scope, key],
      );
      if (newest === undefined || newest.retired_at !== null) return undefined;
      const row = await this.#db.get<DocumentRow>(SELECT_DOCUMENT, [newest.id]);
      return row === undefined ? undefined : documentRecord(row);
    }
    const row = await this.#db.get<DocumentRow>(ADDRESS_AT, [a.kind, scope, key, when]);
    return row !== undefined && isLiveRow(row, when) ? documentRecord(row) : undefined;
  }

  async document(
    id: DocumentId,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<MaterializedDocument | undefined> {
    this.#check(options);
    checkId("document id", id);
    const when = checkAt(at);
    return this.#db.transaction(
      (db) => {
        const row = db.get<DocumentRow>(SELECT_DOCUMENT, [id]);
        if (row === undefined || !isLiveRow(row, when)) return undefined;
        const record = documentRecord(row);
        const cached = when === "current" ? this.#values.get(id) : undefined;
        if (cached !== undefined)
          return {
            record,
            version: cached.version,
            value: cloneJson(cached.value),
            deltasSinceBase: cached.deltasSinceBase,
          };
        return { record, ...readDocumentRows(db, row, when) };
      },
      { readOnly: true },
    );
  }

  async scanDocuments(
    query: DocumentQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<DocumentRecord>> {
    this.#check(options);
    const scan = "scanDocuments";
    const order = checkQuery(scan, query, ["scope", "at", "kind"], "ascending");
    checkLimit(limit);
    if (query.scope === undefined)
      throw new StorageRequestError("bad-query", `${scan}: scope is required`);
    const scope = scopeKey(checkScope(query.scope));
    const at = checkAt(query.at);
    const kind = oneOfField<string>(scan, query, "kind", "string");
    const after = startAfter(order, decodeIdCursor(scan, query, cursor));
    const { cmp, dir } = orderSql(order);
    const terms = ["scope = ?"];
    const params: SqlValue[] = [scope];
    if (kind !== undefined) {
      terms.push("kind = ?");
      params.push(kind);
    }
    if (at === "current") terms.push("retired_at IS NULL");
    else {
      terms.push("created_at <= ?", "(retired_at IS NULL OR retired_at > ?)");
      params.push(at, at);
    }
    terms.push(`id ${cmp} ?`);
    params.push(after, limit + 1);
    const sql = `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE ${terms.join(" AND ")} ORDER BY id ${dir} LIMIT ?`;
    const rows = await this.#db.all<DocumentRow>(sql, params);
    return pageFromRows(scan, query, limit, rows, documentRecord);
  }

  /**
   * Runs a read-only `SELECT` (or `WITH … SELECT`) and returns its rows, for
   * showing what is stored (e.g. `ENTRY_ROWS_SQL`) without closing the
   * storage. It never writes: anything else is refused.
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

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Let commits already handed to the writer finish before the connection goes away.
    await this.#writer;
    await this.#db.close();
  }

  #cachedSql(key: string, build: () => string): string {
    let sql = this.#sql.get(key);
    if (sql === undefined) {
      sql = build();
      this.#sql.set(key, sql);
    }
    return sql;
  }
}

function booleanFlag(value: boolean | undefined): number | undefined {
  return value === undefined ? undefined : value ? 1 : 0;
}

function readCounters(db: SqliteStatements, location: string): Counters {
  const seq = db.get<{ value: number }>("SELECT value FROM metadata WHERE name = 'next_seq'");
  if (seq === undefined || !Number.isSafeInteger(seq.value) || seq.value < 1)
    throw new StorageCorrupted(`${location}: table metadata has no valid next_seq row`, {
      file: location,
      table: "metadata",
    });
  const ids = db.get<{ high_water: number }>(
    "SELECT high_water FROM ids WHERE namespace = 'global'",
  );
  if (ids === undefined || !Number.isSafeInteger(ids.high_water) || ids.high_water < 1)
    throw new StorageCorrupted(`${location}: table ids has no valid 'global' high_water row`, {
      file: location,
      table: "ids",
    });
  return { nextSeq: seq.value, persistedHighWater: ids.high_water, highWater: ids.high_water };
}
