import type {
  ConversationRecord,
  DocumentAddress,
  DocumentRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "@durably/core";
import {
  scopeKey,
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
import type { Pool } from "pg";
import { loadDocuments, revisionsWhere } from "./documents.js";
import { locateUnsafe } from "./bigint-range.js";
import { ioFailure, serverOfConfig } from "./open-errors.js";
import { query, UnsafeBigint } from "./queries.js";
import {
  DOCUMENT_COLUMNS,
  documentRecord,
  isLiveRow,
  parseRecord,
  type DocumentRow,
} from "./rows.js";
import { exactText } from "./sql-literals.js";

type IdRecordRow = { id: number; record: string };

/** Task filter fields with their columns; the first present one leads the index range. */
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

/** The terms of a read's WHERE and their parameters; `$1` is the session key. */
class Where {
  readonly terms = ["session_key = $1"];
  readonly params: unknown[] = [];

  /** Adds a parameter and returns its placeholder. */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length + 1}`;
  }

  equals(column: string, value: unknown): this {
    if (value !== undefined) this.terms.push(`${column} = ${this.param(value)}`);
    return this;
  }

  /**
   * `id` bounds of a range. An open end (the first page, the start of a
   * root conversation, the largest safe id) is left out rather than written
   * as a safe number: a damaged id beyond the safe integers is then read and
   * reported, never skipped.
   */
  ids(lower: { cmp: string; value: number } | undefined, upper?: number): this {
    if (lower !== undefined) this.terms.push(`id ${lower.cmp} ${this.param(lower.value)}`);
    if (upper !== undefined && upper < Number.MAX_SAFE_INTEGER)
      this.terms.push(`id <= ${this.param(upper)}`);
    return this;
  }

  get sql(): string {
    return this.terms.join(" AND ");
  }
}

/** An entry range's bounds: `lower < id <= upper`, 0 below being the start. */
function entryBounds(where: Where, range: EntryRange): Where {
  return where.ids(range.lower > 0 ? { cmp: ">", value: range.lower } : undefined, range.upper);
}

/** The typed reads of one session, on the pool: each one indexed query (entry scans one per range). */
export class PostgresReads {
  constructor(
    private readonly pool: Pool,
    private readonly schema: string,
    private readonly session: string,
  ) {}

  /**
   * One read on the pool; a driver error becomes `StorageIOError` naming the
   * server, session and table, a bigint beyond the safe integers
   * `StorageCorrupted` naming its column and row.
   */
  async #all<R extends object>(
    table: string,
    text: string,
    values: readonly unknown[],
  ): Promise<R[]> {
    const params = [this.session, ...values];
    try {
      return (await query<R & Record<string, unknown>>(this.pool, text, params)).rows;
    } catch (error) {
      if (error instanceof UnsafeBigint)
        throw await locateUnsafe(
          error,
          { runner: this.pool, text, values: params },
          this.session,
          table,
        );
      throw this.#failure(error, table);
    }
  }

  /** One page of an id-ordered scan of `table` matching `where`. */
  #page<R extends object>(
    table: string,
    columns: string,
    where: Where,
    range: IdRange,
  ): Promise<R[]> {
    const { cmp, dir } = orderSql(range.order);
    where.ids(range.after === undefined ? undefined : { cmp, value: range.after });
    const limit = where.param(range.limit);
    return this.#all<R>(
      table,
      `SELECT ${columns} FROM ${this.schema}.${table} WHERE ${where.sql} ORDER BY id ${dir} LIMIT ${limit}`,
      where.params,
    );
  }

  #failure(error: unknown, table: string): unknown {
    return ioFailure(
      error,
      serverOfConfig(this.pool),
      `reading ${this.schema}.${table} of session ${JSON.stringify(this.session)}`,
      { table },
    );
  }

  #parse<T>(table: string, row: IdRecordRow): T {
    return parseRecord<T>(this.session, table, row.id, row.record);
  }

  async conversation(id: number): Promise<ConversationRecord | undefined> {
    const [row] = await this.#all<{ record: string }>(
      "conversations",
      `SELECT record FROM ${this.schema}.conversations WHERE session_key = $1 AND id = $2`,
      [id],
    );
    return row && parseRecord<ConversationRecord>(this.session, "conversations", id, row.record);
  }

  async scanConversations(
    filter: ConversationFilter,
    range: IdRange,
  ): Promise<ConversationRecord[]> {
    const rows = await this.#page<IdRecordRow>(
      "conversations",
      "id, record",
      new Where().equals("owner_task_id", filter.ownerTaskId),
      range,
    );
    return rows.map((r) => this.#parse<ConversationRecord>("conversations", r));
  }

  async entry(id: number): Promise<StoredEntry | undefined> {
    // The id too, so a damaged commit_seq is reported with its row.
    const [row] = await this.#all<{ commit_seq: number; record: string }>(
      "entries",
      `SELECT id, commit_seq, record FROM ${this.schema}.entries WHERE session_key = $1 AND id = $2`,
      [id],
    );
    if (row === undefined) return undefined;
    return {
      entry: parseRecord<EntryRecord>(this.session, "entries", id, row.record),
      commitSeq: row.commit_seq,
    };
  }

  async latestHead(ranges: readonly EntryRange[]): Promise<EntryRecord | undefined> {
    // Entries are immutable, so one query per range, newest first, is consistent.
    for (const range of ranges) {
      const where = entryBounds(new Where().equals("conversation_id", range.conversationId), range);
      const [row] = await this.#all<IdRecordRow>(
        "entries",
        `SELECT id, record FROM ${this.schema}.entries WHERE ${where.sql} AND is_head ORDER BY id DESC LIMIT 1`,
        where.params,
      );
      if (row !== undefined) return this.#parse<EntryRecord>("entries", row);
    }
    return undefined;
  }

  async scanEntries(
    ranges: readonly EntryRange[],
    order: Order,
    limit: number,
  ): Promise<EntryRecord[]> {
    const dir = order === "descending" ? "DESC" : "ASC";
    const found: IdRecordRow[] = [];
    for (const range of ranges) {
      const where = entryBounds(new Where().equals("conversation_id", range.conversationId), range);
      const rest = where.param(limit - found.length);
      found.push(
        ...(await this.#all<IdRecordRow>(
          "entries",
          `SELECT id, record FROM ${this.schema}.entries WHERE ${where.sql} ORDER BY id ${dir} LIMIT ${rest}`,
          where.params,
        )),
      );
      if (found.length >= limit) break;
    }
    return found.map((r) => this.#parse<EntryRecord>("entries", r));
  }

  async task(id: number): Promise<TaskRecord | undefined> {
    const [row] = await this.#all<{ record: string }>(
      "tasks",
      `SELECT record FROM ${this.schema}.tasks WHERE session_key = $1 AND id = $2`,
      [id],
    );
    return row && parseRecord<TaskRecord>(this.session, "tasks", id, row.record);
  }

  async scanTasks(filter: TaskFilter, range: IdRange): Promise<TaskRecord[]> {
    const values: unknown[] = [
      filter.owner,
      filter.conversationId,
      filter.status,
      filter.kind === undefined ? undefined : exactText(filter.kind),
      filter.abortRequested,
      filter.background,
    ];
    const where = new Where();
    TASK_FILTERS.forEach(([, column], i) => where.equals(column, values[i]));
    const rows = await this.#page<IdRecordRow>("tasks", "id, record", where, range);
    return rows.map((r) => this.#parse<TaskRecord>("tasks", r));
  }

  async submission(id: number): Promise<SubmissionRecord | undefined> {
    const [row] = await this.#all<{ record: string }>(
      "submissions",
      `SELECT record FROM ${this.schema}.submissions WHERE session_key = $1 AND id = $2`,
      [id],
    );
    return row && parseRecord<SubmissionRecord>(this.session, "submissions", id, row.record);
  }

  async scanSubmissions(filter: SubmissionFilter, range: IdRange): Promise<SubmissionRecord[]> {
    const where = new Where()
      .equals("conversation_id", filter.conversationId)
      .equals("status", filter.status);
    const rows = await this.#page<IdRecordRow>("submissions", "id, record", where, range);
    return rows.map((r) => this.#parse<SubmissionRecord>("submissions", r));
  }

  async submissionByRequest(
    conversationId: number,
    requestId: string,
  ): Promise<SubmissionRecord | undefined> {
    const [row] = await this.#all<IdRecordRow>(
      "submissions",
      `SELECT id, record FROM ${this.schema}.submissions WHERE session_key = $1 AND conversation_id = $2 AND request_json = $3 ORDER BY id LIMIT 1`,
      [conversationId, exactText(requestId)],
    );
    return row && this.#parse<SubmissionRecord>("submissions", row);
  }

  async findDocument(
    address: DocumentAddress,
    at: number | "current",
  ): Promise<DocumentRecord | undefined> {
    const where = [
      exactText(address.kind),
      scopeKey(address.scope),
      address.key === undefined ? "" : exactText(address.key),
    ];
    const s = this.schema;
    if (at === "current") {
      const [row] = await this.#all<DocumentRow>(
        "documents",
        `SELECT ${DOCUMENT_COLUMNS} FROM ${s}.documents WHERE session_key = $1 AND kind = $2 AND scope = $3 AND key_json = $4 AND retired_at IS NULL`,
        where,
      );
      return row && documentRecord(this.session, row);
    }
    // Incarnations at one address never overlap in time, so the newest created at or before `at` decides.
    const [row] = await this.#all<DocumentRow>(
      "documents",
      `SELECT ${DOCUMENT_COLUMNS} FROM ${s}.documents WHERE session_key = $1 AND kind = $2 AND scope = $3 AND key_json = $4 AND created_at <= $5 ORDER BY created_at DESC LIMIT 1`,
      [...where, at],
    );
    return row && documentRecord(this.session, row);
  }

  /** The row and the revisions a read at `at` needs, in one statement (one snapshot). */
  async document(id: number, at: number | "current"): Promise<DocumentSnapshot | undefined> {
    const loaded = (
      await loadDocuments(this.pool, this.schema, this.session, [id], at).catch(
        (error: unknown) => {
          throw this.#failure(error, "documents");
        },
      )
    ).get(id);
    if (loaded === undefined) return undefined;
    const snapshot = {
      record: documentRecord(this.session, loaded.row),
      newestBaseSeq: loaded.row.base_seq,
    };
    if (!isLiveRow(loaded.row, at)) return snapshot;
    return { ...snapshot, revisions: loaded.revisions, where: revisionsWhere(this.session) };
  }

  async scanDocuments(filter: DocumentFilter, range: IdRange): Promise<DocumentRecord[]> {
    const { at, kind } = filter;
    const where = new Where()
      .equals("scope", scopeKey(filter.scope))
      .equals("kind", kind === undefined ? undefined : exactText(kind));
    if (at === "current") where.terms.push("retired_at IS NULL");
    else {
      const n = where.param(at);
      where.terms.push(`created_at <= ${n}`, `(retired_at IS NULL OR retired_at > ${n})`);
    }
    const rows = await this.#page<DocumentRow>("documents", DOCUMENT_COLUMNS, where, range);
    return rows.map((row) => documentRecord(this.session, row));
  }
}
