import {
  checkId,
  checkLimit,
  checkQuery,
  decodeIdCursor,
  entryScanRanges,
  entrySegments,
  idField,
  oneOfField,
  pageFromRows,
  startAfter,
  StorageRequestError,
  type ConversationId,
  type ConversationQuery,
  type ConversationRecord,
  type Cursor,
  type EntryId,
  type EntryQuery,
  type EntryRecord,
  type Page,
  type Seq,
  type SubmissionId,
  type SubmissionQuery,
  type SubmissionRecord,
  type TaskId,
  type TaskQuery,
  type TaskRecord,
} from "@durably/core";
import { guarded, type Place } from "./driver-errors.js";
import {
  CONVERSATION_COLUMNS,
  ENTRY_COLUMNS,
  SUBMISSION_COLUMNS,
  TASK_COLUMNS,
  type ConversationRow,
  type EntryRow,
  type RowReader,
  type SubmissionRow,
  type TaskRow,
} from "./rows.js";
import type { SqliteDatabase, SqlValue } from "./sqlite-database.js";

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

const SELECT_CONVERSATION = `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = ?`;
const SELECT_ENTRY = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE id = ?`;
const SELECT_TASK = `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ?`;
const SELECT_SUBMISSION = `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE id = ?`;
const SUBMISSION_BY_REQUEST = `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE conversation_id = ? AND request_id = ? ORDER BY id LIMIT 1`;
// `head = 1` matches the partial index entries_heads word for word, so the planner uses it.
const HEAD_IN_RANGE = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND id > ? AND id <= ? AND head = 1 ORDER BY id DESC LIMIT 1`;
const ENTRY_RANGE_DESC = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND id > ? AND id <= ? ORDER BY id DESC LIMIT ?`;
const ENTRY_RANGE_ASC = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND id > ? AND id <= ? ORDER BY id ASC LIMIT ?`;

export function orderSql(order: "ascending" | "descending"): { cmp: string; dir: string } {
  return order === "ascending" ? { cmp: ">", dir: "ASC" } : { cmp: "<", dir: "DESC" };
}

function booleanFlag(value: boolean | undefined): number | undefined {
  return value === undefined ? undefined : value ? 1 : 0;
}

/**
 * Reads of conversations, entries, tasks and submissions. Every row comes
 * back through the `RowReader`, which verifies its checksum; driver errors
 * that mean damage or a failing disk come out typed, naming file, table and key.
 */
export class RecordReads {
  readonly #db: SqliteDatabase;
  readonly #rows: RowReader;
  readonly #sql = new Map<string, string>();

  constructor(db: SqliteDatabase, rows: RowReader) {
    this.#db = db;
    this.#rows = rows;
  }

  #guard<T>(action: string, place: Place, work: () => Promise<T>): Promise<T> {
    return guarded(this.#rows.file, action, place, work);
  }

  async conversation(id: ConversationId): Promise<ConversationRecord | undefined> {
    checkId("conversation id", id);
    return this.#guard("reading a conversation", { table: "conversations", key: id }, async () => {
      const row = await this.#db.get<ConversationRow>(SELECT_CONVERSATION, [id]);
      return row === undefined ? undefined : this.#rows.conversation(row);
    });
  }

  async scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
  ): Promise<Page<ConversationRecord>> {
    const scan = "scanConversations";
    const order = checkQuery(scan, query, ["ownerTaskId"], "ascending");
    checkLimit(limit);
    const owner = idField(scan, query, "ownerTaskId", false);
    const after = startAfter(order, decodeIdCursor(scan, query, cursor));
    const { cmp, dir } = orderSql(order);
    const where = owner === undefined ? `id ${cmp} ?` : `owner_task_id = ? AND id ${cmp} ?`;
    const params: SqlValue[] = owner === undefined ? [after, limit + 1] : [owner, after, limit + 1];
    const sql = `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE ${where} ORDER BY id ${dir} LIMIT ?`;
    return this.#guard("scanning conversations", { table: "conversations" }, async () => {
      const rows = await this.#db.all<ConversationRow>(sql, params);
      return pageFromRows(scan, query, limit, rows, (r) => this.#rows.conversation(r));
    });
  }

  async entry(id: EntryId): Promise<{ entry: EntryRecord; commitSeq: Seq } | undefined> {
    checkId("entry id", id);
    return this.#guard("reading an entry", { table: "entries", key: id }, async () => {
      const row = await this.#db.get<EntryRow>(SELECT_ENTRY, [id]);
      if (row === undefined) return undefined;
      return { entry: this.#rows.entry(row), commitSeq: row.commit_seq as Seq };
    });
  }

  #segments(conversationId: number) {
    // Conversations are immutable once stored, so walking them in several reads is consistent.
    return entrySegments(conversationId as ConversationId, (id) => this.conversation(id));
  }

  async latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
  ): Promise<EntryRecord | undefined> {
    checkId("conversation id", conversationId);
    if (atOrBefore !== undefined) checkId("atOrBefore", atOrBefore);
    const segments = await this.#segments(conversationId);
    if (segments === undefined) return undefined;
    const limit = atOrBefore ?? Number.MAX_SAFE_INTEGER;
    return this.#guard("finding the latest head", { table: "entries" }, () =>
      this.#db.transaction(
        (db) => {
          for (const range of entryScanRanges(segments, "descending", 1, limit)) {
            const row = db.get<EntryRow>(HEAD_IN_RANGE, [
              range.conversationId,
              range.lower,
              range.upper,
            ]);
            if (row !== undefined) return this.#rows.entry(row);
          }
          return undefined;
        },
        { readOnly: true },
      ),
    );
  }

  async scanEntries(query: EntryQuery, limit: number, cursor?: Cursor): Promise<Page<EntryRecord>> {
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
    const sql = order === "descending" ? ENTRY_RANGE_DESC : ENTRY_RANGE_ASC;
    return this.#guard("scanning entries", { table: "entries" }, async () => {
      const rows = await this.#db.transaction(
        (db) => {
          const found: EntryRow[] = [];
          for (const range of ranges) {
            const left = limit + 1 - found.length;
            found.push(
              ...db.all<EntryRow>(sql, [range.conversationId, range.lower, range.upper, left]),
            );
            if (found.length > limit) break;
          }
          return found;
        },
        { readOnly: true },
      );
      return pageFromRows(scan, query, limit, rows, (r) => this.#rows.entry(r));
    });
  }

  async task(id: TaskId): Promise<TaskRecord | undefined> {
    checkId("task id", id);
    return this.#guard("reading a task", { table: "tasks", key: id }, async () => {
      const row = await this.#db.get<TaskRow>(SELECT_TASK, [id]);
      return row === undefined ? undefined : this.#rows.task(row);
    });
  }

  async scanTasks(query: TaskQuery, limit: number, cursor?: Cursor): Promise<Page<TaskRecord>> {
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
      return `SELECT ${TASK_COLUMNS} FROM tasks WHERE ${terms.join(" AND ")} ORDER BY id ${dir} LIMIT ?`;
    });
    return this.#guard("scanning tasks", { table: "tasks" }, async () => {
      const rows = await this.#db.all<TaskRow>(sql, params);
      return pageFromRows(scan, query, limit, rows, (r) => this.#rows.task(r));
    });
  }

  async submission(id: SubmissionId): Promise<SubmissionRecord | undefined> {
    checkId("submission id", id);
    return this.#guard("reading a submission", { table: "submissions", key: id }, async () => {
      const row = await this.#db.get<SubmissionRow>(SELECT_SUBMISSION, [id]);
      return row === undefined ? undefined : this.#rows.submission(row);
    });
  }

  async scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
  ): Promise<Page<SubmissionRecord>> {
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
    const sql = `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE ${where} ORDER BY id ${dir} LIMIT ?`;
    return this.#guard("scanning submissions", { table: "submissions" }, async () => {
      const rows = await this.#db.all<SubmissionRow>(sql, params);
      return pageFromRows(scan, query, limit, rows, (r) => this.#rows.submission(r));
    });
  }

  async submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
  ): Promise<SubmissionRecord | undefined> {
    checkId("conversation id", conversationId);
    if (typeof requestId !== "string")
      throw new StorageRequestError(
        "bad-argument",
        `requestId must be a string, got ${JSON.stringify(requestId)}`,
      );
    return this.#guard("finding a submission by request id", { table: "submissions" }, async () => {
      const row = await this.#db.get<SubmissionRow>(SUBMISSION_BY_REQUEST, [
        conversationId,
        requestId,
      ]);
      return row === undefined ? undefined : this.#rows.submission(row);
    });
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
