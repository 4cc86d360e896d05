import {
  StorageClosed,
  StorageLocked,
  StoragePoisoned,
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
  type Order,
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
  entryScanRanges,
  checkAddress,
  checkAt,
  checkId,
  checkLimit,
  checkQuery,
  checkScope,
  decodeIdCursor,
  entrySegments,
  idField,
  oneOfField,
  pageFromRows,
  scopeKey,
  startAfter,
} from "@durably/core/storage";
import type { Pool, PoolClient } from "pg";
import { CommitWriter } from "./commit-writer.js";
import { loadDocuments, materialize } from "./documents.js";
import { acquireLease, releaseLease, renewLease, type Lease, type LeaseSettings } from "./lease.js";
import { query } from "./queries.js";
import {
  DOCUMENT_COLUMNS,
  documentRecord,
  isLiveRow,
  parseRecord,
  type DocumentRow,
} from "./rows.js";
import { migrate } from "./schema.js";
import { exactText } from "./sql-literals.js";

export interface PostgresStorageSettings {
  /** Schema holding Durably's tables (created by the migrations). */
  schema: string;
  /** The session key: every row this storage reads or writes carries it. */
  session: string;
  /** Names this owner in the lease row and in `StorageLocked` messages. */
  owner: string;
  /** How long a lease lasts without renewal; renewed every third of it. */
  leaseMs: number;
  /** Close the pool on `close()` (it was created by `openPostgresStorage`). */
  ownsPool: boolean;
}

type IdRecordRow = { id: number; record: string };

const TASK_STATUSES = ["pending", "running", "waiting", "completing", "terminal"] as const;
const SUBMISSION_STATUSES = ["queued", "placed", "done", "unanswered"] as const;
const BOOLEANS = [true, false] as const;
/** Task query fields with their columns; the first present one leads the index range. */
const TASK_FILTERS = [
  ["owner", "owner"],
  ["conversationId", "conversation_id"],
  ["status", "status"],
  ["kind", "kind"],
  ["abortRequested", "abort_requested"],
  ["background", "background"],
] as const;

function orderSql(order: Order): { cmp: string; dir: string } {
  return order === "ascending" ? { cmp: ">", dir: "ASC" } : { cmp: "<", dir: "DESC" };
}

/**
 * The Storage contract on PostgreSQL for one session of a shared database.
 * Commits run on one connection held for the storage's lifetime (it also
 * holds the owner's liveness lock); reads use the pool. Open it with
 * `openPostgresStorage`.
 */
export class PostgresStorage implements Storage {
  readonly capabilities: StorageCapabilities = { persistent: true };
  readonly session: string;
  readonly schema: string;
  readonly #pool: Pool;
  readonly #client: PoolClient;
  readonly #settings: PostgresStorageSettings;
  readonly #lease: Lease;
  readonly #writer: CommitWriter;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId: number;
  #closed = false;
  /** Set once the storage can no longer write safely: the lease was lost, or a write's outcome is unknown. */
  #broken: Error | undefined;
  readonly #renewal: NodeJS.Timeout;

  private constructor(
    pool: Pool,
    client: PoolClient,
    settings: PostgresStorageSettings,
    lease: Lease,
  ) {
    this.#pool = pool;
    this.#client = client;
    this.#settings = settings;
    this.#lease = lease;
    this.session = settings.session;
    this.schema = settings.schema;
    this.#writer = new CommitWriter(client, settings.schema, settings.session, lease.token, {
      nextSeq: lease.nextSeq,
      highWater: lease.highWater,
    });
    this.#nextId = Math.max(lease.highWater + 1, 2);
    this.#renewal = setInterval(
      () => this.#renew(),
      Math.max(50, Math.floor(settings.leaseMs / 3)),
    );
    this.#renewal.unref();
  }

  /**
   * Takes one connection from `pool` for the storage's writes, migrates the
   * schema (serialised across servers by an advisory lock), and takes the
   * session's lease. Fails with `StorageLocked` while another owner's lease
   * is live and its connection alive; changes nothing then.
   */
  static async open(pool: Pool, settings: PostgresStorageSettings): Promise<PostgresStorage> {
    const client = await pool.connect();
    let failure: Error | undefined;
    // A checked-out connection reports its death as an event; without a listener it would crash the process.
    const onError = (error: Error) => (failure = error);
    client.on("error", onError);
    try {
      await client.query("SELECT set_config('application_name', $1, false)", [
        `durably ${settings.session}`.slice(0, 63),
      ]);
      await migrate(client, settings.schema);
      const leaseSettings: LeaseSettings = settings;
      const lease = await acquireLease(client, leaseSettings);
      if (failure !== undefined) throw failure;
      client.off("error", onError);
      const storage = new PostgresStorage(pool, client, settings, lease);
      client.on("error", (error) => storage.#fail(error));
      return storage;
    } catch (error) {
      // Destroying the connection also drops any advisory lock it took.
      client.release(true);
      if (settings.ownsPool) await pool.end().catch(() => undefined);
      throw error;
    }
  }

  #fail(cause: unknown): void {
    if (this.#broken !== undefined) return;
    this.#broken = new StoragePoisoned(
      `the PostgreSQL storage of session ${JSON.stringify(this.session)} lost its connection or a write's outcome is unknown; close and reopen it`,
      { cause },
    );
  }

  #renew(): void {
    if (this.#closed || this.#broken !== undefined) return;
    const run = this.#queue.then(async () => {
      if (this.#closed || this.#broken !== undefined) return;
      const held = await renewLease(this.#client, this.#settings, this.#lease);
      if (!held) this.#broken = this.#writer.leaseLost();
    });
    this.#queue = run.catch((error: unknown) => this.#fail(error));
  }

  #check(options: CallOptions | undefined): void {
    if (this.#closed)
      throw new StorageClosed(
        `the PostgreSQL storage of session ${JSON.stringify(this.session)} is closed`,
      );
    options?.signal?.throwIfAborted();
  }

  async commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    this.#check(options);
    if (!Array.isArray(batches)) throw new TypeError("commit: batches must be an array of batches");
    // Copy and check before the first await: the caller may reuse its objects at once.
    const checked = this.#writer.check(batches);
    if (checked.length === 0) return { stored: 0 };
    // Calls run one after another on the owner connection.
    const run = this.#queue.then(async () => {
      if (this.#broken !== undefined) throw this.#broken;
      try {
        return await this.#writer.commit(checked, receive, this.#nextId - 1, (highWater) => {
          if (highWater >= this.#nextId) this.#nextId = highWater + 1;
        });
      } catch (error) {
        // A fenced commit changed nothing, but this storage may never write again;
        // any other failure leaves the outcome unknown.
        if (error instanceof StorageLocked) this.#broken = error;
        else this.#fail(error);
        throw error;
      }
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  mintId(options?: CallOptions): Promise<number> {
    try {
      this.#check(options);
      if (this.#broken !== undefined) throw this.#broken;
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const id = this.#nextId;
    this.#nextId = id + 1;
    return Promise.resolve(id);
  }

  #all<R extends object>(text: string, values: readonly unknown[]): Promise<R[]> {
    return query<R & Record<string, unknown>>(this.#pool, text, [this.session, ...values]).then(
      (r) => r.rows,
    );
  }

  async conversation(
    id: ConversationId,
    options?: CallOptions,
  ): Promise<ConversationRecord | undefined> {
    this.#check(options);
    checkId("conversation id", id);
    const [row] = await this.#all<{ record: string }>(
      `SELECT record FROM ${this.schema}.conversations WHERE session_key = $1 AND id = $2`,
      [id],
    );
    return row === undefined
      ? undefined
      : parseRecord<ConversationRecord>(this.session, "conversations", id, row.record);
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
    const rows =
      owner === undefined
        ? await this.#all<IdRecordRow>(
            `SELECT id, record FROM ${this.schema}.conversations WHERE session_key = $1 AND id ${cmp} $2 ORDER BY id ${dir} LIMIT $3`,
            [after, limit + 1],
          )
        : await this.#all<IdRecordRow>(
            `SELECT id, record FROM ${this.schema}.conversations WHERE session_key = $1 AND owner_task_id = $2 AND id ${cmp} $3 ORDER BY id ${dir} LIMIT $4`,
            [owner, after, limit + 1],
          );
    return pageFromRows(scan, query, limit, rows, (r) =>
      parseRecord<ConversationRecord>(this.session, "conversations", r.id, r.record),
    );
  }

  async entry(
    id: EntryId,
    options?: CallOptions,
  ): Promise<{ entry: EntryRecord; commitSeq: Seq } | undefined> {
    this.#check(options);
    checkId("entry id", id);
    const [row] = await this.#all<{ commit_seq: number; record: string }>(
      `SELECT commit_seq, record FROM ${this.schema}.entries WHERE session_key = $1 AND id = $2`,
      [id],
    );
    if (row === undefined) return undefined;
    return {
      entry: parseRecord<EntryRecord>(this.session, "entries", id, row.record),
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
    // Entries are immutable, so one query per segment, newest first, is consistent.
    for (const range of entryScanRanges(segments, "descending", 1, limit)) {
      const [row] = await this.#all<IdRecordRow>(
        `SELECT id, record FROM ${this.schema}.entries WHERE session_key = $1 AND conversation_id = $2 AND is_head AND id > $3 AND id <= $4 ORDER BY id DESC LIMIT 1`,
        [range.conversationId, range.lower, range.upper],
      );
      if (row !== undefined)
        return parseRecord<EntryRecord>(this.session, "entries", row.id, row.record);
    }
    return undefined;
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
    const dir = order === "descending" ? "DESC" : "ASC";
    const found: IdRecordRow[] = [];
    for (const range of entryScanRanges(segments, order, min, max, position)) {
      found.push(
        ...(await this.#all<IdRecordRow>(
          `SELECT id, record FROM ${this.schema}.entries WHERE session_key = $1 AND conversation_id = $2 AND id > $3 AND id <= $4 ORDER BY id ${dir} LIMIT $5`,
          [range.conversationId, range.lower, range.upper, limit + 1 - found.length],
        )),
      );
      if (found.length > limit) break;
    }
    return pageFromRows(scan, query, limit, found, (r) =>
      parseRecord<EntryRecord>(this.session, "entries", r.id, r.record),
    );
  }

  async task(id: TaskId, options?: CallOptions): Promise<TaskRecord | undefined> {
    this.#check(options);
    checkId("task id", id);
    const [row] = await this.#all<{ record: string }>(
      `SELECT record FROM ${this.schema}.tasks WHERE session_key = $1 AND id = $2`,
      [id],
    );
    return row === undefined
      ? undefined
      : parseRecord<TaskRecord>(this.session, "tasks", id, row.record);
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
    const kind = oneOfField<string>(scan, query, "kind", "string");
    const values: unknown[] = [
      idField(scan, query, "owner", false),
      idField(scan, query, "conversationId", false),
      oneOfField(scan, query, "status", TASK_STATUSES),
      kind === undefined ? undefined : exactText(kind),
      oneOfField(scan, query, "abortRequested", BOOLEANS),
      oneOfField(scan, query, "background", BOOLEANS),
    ];
    const after = startAfter(order, decodeIdCursor(scan, query, cursor));
    const { cmp, dir } = orderSql(order);
    const params: unknown[] = [];
    const terms = ["session_key = $1"];
    TASK_FILTERS.forEach(([, column], i) => {
      if (values[i] === undefined) return;
      params.push(values[i]);
      terms.push(`${column} = $${params.length + 1}`);
    });
    params.push(after, limit + 1);
    terms.push(`id ${cmp} $${params.length}`);
    const rows = await this.#all<IdRecordRow>(
      `SELECT id, record FROM ${this.schema}.tasks WHERE ${terms.join(" AND ")} ORDER BY id ${dir} LIMIT $${params.length + 1}`,
      params,
    );
    return pageFromRows(scan, query, limit, rows, (r) =>
      parseRecord<TaskRecord>(this.session, "tasks", r.id, r.record),
    );
  }

  async submission(id: SubmissionId, options?: CallOptions): Promise<SubmissionRecord | undefined> {
    this.#check(options);
    checkId("submission id", id);
    const [row] = await this.#all<{ record: string }>(
      `SELECT record FROM ${this.schema}.submissions WHERE session_key = $1 AND id = $2`,
      [id],
    );
    return row === undefined
      ? undefined
      : parseRecord<SubmissionRecord>(this.session, "submissions", id, row.record);
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
    const s = this.schema;
    const rows =
      status === undefined
        ? await this.#all<IdRecordRow>(
            `SELECT id, record FROM ${s}.submissions WHERE session_key = $1 AND conversation_id = $2 AND id ${cmp} $3 ORDER BY id ${dir} LIMIT $4`,
            [conversationId, after, limit + 1],
          )
        : await this.#all<IdRecordRow>(
            `SELECT id, record FROM ${s}.submissions WHERE session_key = $1 AND conversation_id = $2 AND status = $3 AND id ${cmp} $4 ORDER BY id ${dir} LIMIT $5`,
            [conversationId, status, after, limit + 1],
          );
    return pageFromRows(scan, query, limit, rows, (r) =>
      parseRecord<SubmissionRecord>(this.session, "submissions", r.id, r.record),
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
    const [row] = await this.#all<IdRecordRow>(
      `SELECT id, record FROM ${this.schema}.submissions WHERE session_key = $1 AND conversation_id = $2 AND request_json = $3 ORDER BY id LIMIT 1`,
      [conversationId, exactText(requestId)],
    );
    return row === undefined
      ? undefined
      : parseRecord<SubmissionRecord>(this.session, "submissions", row.id, row.record);
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
    const where = [exactText(a.kind), scope, a.key === undefined ? "" : exactText(a.key)];
    const s = this.schema;
    if (when === "current") {
      const [row] = await this.#all<DocumentRow>(
        `SELECT ${DOCUMENT_COLUMNS} FROM ${s}.documents WHERE session_key = $1 AND kind = $2 AND scope = $3 AND key_json = $4 AND retired_at IS NULL`,
        where,
      );
      return row === undefined ? undefined : documentRecord(this.session, row);
    }
    // Incarnations at one address never overlap in time, so the newest created at or before `at` decides.
    const [row] = await this.#all<DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM ${s}.documents WHERE session_key = $1 AND kind = $2 AND scope = $3 AND key_json = $4 AND created_at <= $5 ORDER BY created_at DESC LIMIT 1`,
      [...where, when],
    );
    return row !== undefined && isLiveRow(row, when)
      ? documentRecord(this.session, row)
      : undefined;
  }

  async document(
    id: DocumentId,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<MaterializedDocument | undefined> {
    this.#check(options);
    checkId("document id", id);
    const when = checkAt(at);
    const loaded = (await loadDocuments(this.#pool, this.schema, this.session, [id], when)).get(id);
    if (loaded === undefined || !isLiveRow(loaded.row, when)) return undefined;
    return {
      record: documentRecord(this.session, loaded.row),
      ...materialize(this.session, loaded, when),
    };
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
    const params: unknown[] = [scope];
    const terms = ["session_key = $1", "scope = $2"];
    if (kind !== undefined) {
      params.push(exactText(kind));
      terms.push(`kind = $${params.length + 1}`);
    }
    if (at === "current") terms.push("retired_at IS NULL");
    else {
      params.push(at);
      const n = params.length + 1;
      terms.push(`created_at <= $${n}`, `(retired_at IS NULL OR retired_at > $${n})`);
    }
    params.push(after, limit + 1);
    terms.push(`id ${cmp} $${params.length}`);
    const rows = await this.#all<DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM ${this.schema}.documents WHERE ${terms.join(" AND ")} ORDER BY id ${dir} LIMIT $${params.length + 1}`,
      params,
    );
    return pageFromRows(scan, query, limit, rows, (row) => documentRecord(this.session, row));
  }

  /**
   * Gives the lease up and returns the owner connection. Commits already
   * handed over finish first. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#renewal);
    await this.#queue;
    try {
      if (this.#broken === undefined) await releaseLease(this.#client, this.#settings, this.#lease);
    } catch {
      // Nothing is lost: destroying the connection below frees the liveness lock,
      // so the next open takes the session over at once even with the lease row left.
    } finally {
      // Destroyed, not returned to the pool: its session-level advisory lock must not outlive us.
      this.#client.release(true);
      if (this.#settings.ownsPool) await this.#pool.end();
    }
  }
}
