import type { ConversationRecord, EntryRecord, SubmissionRecord, TaskRecord } from "@durably/core";
import {
  type ConversationFilter,
  type EntryRange,
  type IdRange,
  type Order,
  type StoredEntry,
  type SubmissionFilter,
  type TaskFilter,
} from "@durably/core/storage";
import { typedDriverError, type Place } from "./driver-errors.js";
import { checkEntryRange, checkNewestAtOrBelow, type LinkedRow } from "./entry-chain.js";
import {
  CONVERSATION_COLUMNS,
  ENTRY_COLUMNS,
  SUBMISSION_COLUMNS,
  TASK_COLUMNS,
  type EntryRow,
  type RecordRow,
  type RowReader,
} from "./rows.js";
import type { SqliteDatabase, SqlValue } from "./sqlite-database.js";

/** Task query fields with their columns, most selective first (the first present one drives the index). */
const TASK_FILTERS = [
  ["owner", "owner"],
  ["conversationId", "conversation_id"],
  ["status", "status"],
  ["kind", "kind"],
  ["abortRequested", "abort_requested"],
  ["background", "background"],
] as const;

type WithId<Row> = Row & { id: number };

const SELECT_CONVERSATION = "SELECT record, crc FROM conversations WHERE id = ?";
const SELECT_ENTRY = "SELECT commit_seq, prev, prev_head, record, crc FROM entries WHERE id = ?";
const SELECT_TASK = "SELECT record, crc FROM tasks WHERE id = ?";
const SELECT_SUBMISSION = "SELECT record, crc FROM submissions WHERE id = ?";
const SUBMISSION_BY_REQUEST = `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE conversation_id = ? AND request_id = ? ORDER BY id LIMIT 1`;
// `head = 1` matches the partial index entries_heads word for word, so the planner uses it.
const HEAD_IN_RANGE = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND id > ? AND id <= ? AND head = 1 ORDER BY id DESC LIMIT 1`;
const ENTRY_RANGE_DESC = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND id > ? AND id <= ? ORDER BY id DESC LIMIT ?`;
const ENTRY_RANGE_ASC = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND id > ? AND id <= ? ORDER BY id ASC LIMIT ?`;

export function orderSql(order: "ascending" | "descending"): { cmp: string; dir: string } {
  return order === "ascending" ? { cmp: ">", dir: "ASC" } : { cmp: "<", dir: "DESC" };
}

/**
 * A scan page's id term and its parameter: after the cursor, in scan order.
 * A first page is bounded by the ends of SQLite's integers, which keeps the
 * planner on the id (or index) range and passes over no row. Bounding it by
 * 0 (ascending) or the largest safe id (descending) would pass over a row
 * damaged to an id outside them, which the page must meet and report (each
 * row's checksum covers its id).
 */
export function pageAfter(range: IdRange): { dir: string; terms: string[]; params: SqlValue[] } {
  const { cmp, dir } = orderSql(range.order);
  if (range.after !== undefined) return { dir, terms: [`id ${cmp} ?`], params: [range.after] };
  const all =
    range.order === "ascending" ? "id >= -9223372036854775808" : "id <= 9223372036854775807";
  return { dir, terms: [all], params: [] };
}

function booleanFlag(value: boolean | undefined): number | undefined {
  return value === undefined ? undefined : value ? 1 : 0;
}

/** Whether a task record has every field a (checked) task filter asks for. */
function taskMatches(task: TaskRecord, query: TaskFilter): boolean {
  return (
    (query.owner === undefined || task.owner === query.owner) &&
    (query.conversationId === undefined || task.conversationId === query.conversationId) &&
    (query.status === undefined || task.state.status === query.status) &&
    (query.kind === undefined || task.kind === query.kind) &&
    (query.abortRequested === undefined ||
      (task.abortRequested === true) === query.abortRequested) &&
    (query.background === undefined || (task.background === true) === query.background)
  );
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

  /** The driver's damage and I/O errors as typed ones naming the place; checksum failures pass as they are. */
  #typed(error: unknown, action: string, place: Place): Error {
    return typedDriverError(error, this.#rows.file, action, place);
  }

  async conversation(id: number): Promise<ConversationRecord | undefined> {
    try {
      const row = await this.#db.get<RecordRow>(SELECT_CONVERSATION, [id]);
      return row === undefined ? undefined : this.#rows.conversation(id, row);
    } catch (error) {
      throw this.#typed(error, "reading a conversation", { table: "conversations", key: id });
    }
  }

  async scanConversations(
    filter: ConversationFilter,
    range: IdRange,
  ): Promise<ConversationRecord[]> {
    const owner = filter.ownerTaskId;
    const page = pageAfter(range);
    const terms = owner === undefined ? page.terms : ["owner_task_id = ?", ...page.terms];
    const params: SqlValue[] = [
      ...(owner === undefined ? [] : [owner]),
      ...page.params,
      range.limit,
    ];
    const sql = `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE ${terms.join(" AND ")} ORDER BY id ${page.dir} LIMIT ?`;
    try {
      const rows = await this.#db.all<WithId<RecordRow>>(sql, params);
      return rows.map((r) => {
        const record = this.#rows.conversation(r.id, r);
        if (owner === undefined) return record;
        return this.#rows.found(
          "conversations",
          r.id,
          record,
          (c) => c.owner?.taskId === owner,
          `owner task ${owner}`,
        );
      });
    } catch (error) {
      throw this.#typed(error, "scanning conversations", { table: "conversations" });
    }
  }

  async entry(id: number): Promise<StoredEntry | undefined> {
    try {
      const row = await this.#db.get<EntryRow>(SELECT_ENTRY, [id]);
      if (row === undefined) return undefined;
      return { entry: this.#rows.entry(id, row), commitSeq: row.commit_seq };
    } catch (error) {
      throw this.#typed(error, "reading an entry", { table: "entries", key: id });
    }
  }

  /** Ranges of one scan, read in one consistent read. */
  async latestHead(ranges: readonly EntryRange[]): Promise<EntryRecord | undefined> {
    try {
      return await this.#db.transaction(
        (db) => {
          for (const range of ranges) {
            const row = db.get<LinkedRow>(HEAD_IN_RANGE, [
              range.conversationId,
              range.lower,
              range.upper,
            ]);
            // Verified first: the check below trusts its id.
            const head =
              row === undefined
                ? undefined
                : this.#rows.found(
                    "entries",
                    row.id,
                    this.#rows.entry(row.id, row),
                    (e) =>
                      e.conversationId === range.conversationId &&
                      e.head != null &&
                      inRange(e.id, range),
                    `the heads of conversation ${range.conversationId} in ${rangeText(range)}`,
                  );
            checkNewestAtOrBelow(db, this.#rows, "heads", range, row?.id);
            if (head !== undefined) return head;
          }
          return undefined;
        },
        { readOnly: true },
      );
    } catch (error) {
      throw this.#typed(error, "finding the latest head", { table: "entries" });
    }
  }

  async scanEntries(
    ranges: readonly EntryRange[],
    order: Order,
    limit: number,
  ): Promise<EntryRecord[]> {
    const sql = order === "descending" ? ENTRY_RANGE_DESC : ENTRY_RANGE_ASC;
    try {
      return await this.#db.transaction(
        (db) => {
          const found: EntryRecord[] = [];
          for (const range of ranges) {
            const left = limit - found.length;
            const params = [range.conversationId, range.lower, range.upper, left];
            const read = db.all<LinkedRow>(sql, params);
            for (const row of read)
              found.push(
                this.#rows.found(
                  "entries",
                  row.id,
                  this.#rows.entry(row.id, row),
                  // A damaged index key can place a row outside the range asked for (a row of an earlier page again).
                  (e) => e.conversationId === range.conversationId && inRange(e.id, range),
                  `the entries of conversation ${range.conversationId} in ${rangeText(range)}`,
                ),
              );
            checkEntryRange(db, this.#rows, range, read, order, read.length < left);
            if (found.length >= limit) break;
          }
          return found;
        },
        { readOnly: true },
      );
    } catch (error) {
      throw this.#typed(error, "scanning entries", { table: "entries" });
    }
  }

  async task(id: number): Promise<TaskRecord | undefined> {
    try {
      const row = await this.#db.get<RecordRow>(SELECT_TASK, [id]);
      return row === undefined ? undefined : this.#rows.task(id, row);
    } catch (error) {
      throw this.#typed(error, "reading a task", { table: "tasks", key: id });
    }
  }

  async scanTasks(filter: TaskFilter, range: IdRange): Promise<TaskRecord[]> {
    const values: (SqlValue | undefined)[] = [
      filter.owner,
      filter.conversationId,
      filter.status,
      filter.kind,
      booleanFlag(filter.abortRequested),
      booleanFlag(filter.background),
    ];
    const page = pageAfter(range);
    const params: SqlValue[] = [];
    let shape = `${range.order}${range.after === undefined ? "" : ",after"}`;
    values.forEach((value, i) => {
      if (value === undefined) return;
      params.push(value);
      shape += `,${i}`;
    });
    params.push(...page.params, range.limit);
    const sql = this.#cachedSql(`tasks:${shape}`, () => {
      // Without ANALYZE statistics SQLite may pick any of the equality indexes; steer it to the
      // most selective field present and keep the others out of index choice with unary "+".
      let indexed = false;
      const terms: string[] = [];
      TASK_FILTERS.forEach(([, column], i) => {
        if (values[i] === undefined) return;
        terms.push(`${indexed ? "+" : ""}${column} = ?`);
        indexed = true;
      });
      terms.push(...page.terms);
      return `SELECT ${TASK_COLUMNS} FROM tasks WHERE ${terms.join(" AND ")} ORDER BY id ${page.dir} LIMIT ?`;
    });
    try {
      const rows = await this.#db.all<WithId<RecordRow>>(sql, params);
      return rows.map((r) =>
        this.#rows.found(
          "tasks",
          r.id,
          this.#rows.task(r.id, r),
          (t) => taskMatches(t, filter),
          `scanTasks(${JSON.stringify(filter)})`,
        ),
      );
    } catch (error) {
      throw this.#typed(error, "scanning tasks", { table: "tasks" });
    }
  }

  async submission(id: number): Promise<SubmissionRecord | undefined> {
    try {
      const row = await this.#db.get<RecordRow>(SELECT_SUBMISSION, [id]);
      return row === undefined ? undefined : this.#rows.submission(id, row);
    } catch (error) {
      throw this.#typed(error, "reading a submission", { table: "submissions", key: id });
    }
  }

  async scanSubmissions(filter: SubmissionFilter, range: IdRange): Promise<SubmissionRecord[]> {
    const { conversationId, status } = filter;
    const page = pageAfter(range);
    const terms = [
      "conversation_id = ?",
      ...(status === undefined ? [] : ["status = ?"]),
      ...page.terms,
    ];
    const params: SqlValue[] = [
      conversationId,
      ...(status === undefined ? [] : [status]),
      ...page.params,
      range.limit,
    ];
    const sql = `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE ${terms.join(" AND ")} ORDER BY id ${page.dir} LIMIT ?`;
    try {
      const rows = await this.#db.all<WithId<RecordRow>>(sql, params);
      return rows.map((r) =>
        this.#rows.found(
          "submissions",
          r.id,
          this.#rows.submission(r.id, r),
          (s) =>
            s.conversationId === conversationId && (status === undefined || s.status === status),
          `scanSubmissions(${JSON.stringify(filter)})`,
        ),
      );
    } catch (error) {
      throw this.#typed(error, "scanning submissions", { table: "submissions" });
    }
  }

  async submissionByRequest(
    conversationId: number,
    requestId: string,
  ): Promise<SubmissionRecord | undefined> {
    try {
      const row = await this.#db.get<WithId<RecordRow>>(SUBMISSION_BY_REQUEST, [
        conversationId,
        requestId,
      ]);
      if (row === undefined) return undefined;
      return this.#rows.found(
        "submissions",
        row.id,
        this.#rows.submission(row.id, row),
        (s) => s.conversationId === conversationId && s.requestId === requestId,
        `request id ${JSON.stringify(requestId)} in conversation ${conversationId}`,
      );
    } catch (error) {
      throw this.#typed(error, "finding a submission by request id", { table: "submissions" });
    }
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

function inRange(id: number, range: EntryRange): boolean {
  return id > range.lower && id <= range.upper;
}

function rangeText(range: EntryRange): string {
  return range.upper >= Number.MAX_SAFE_INTEGER
    ? `ids above ${range.lower}`
    : `ids ${range.lower + 1}..${range.upper}`;
}
