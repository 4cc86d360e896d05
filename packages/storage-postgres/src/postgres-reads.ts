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
  startAfter,
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
import { ioFailure, serverOfConfig } from "./open-errors.js";
import { query } from "./queries.js";
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

/** The typed reads of one session, on the pool: each one indexed query (entry scans one per range). */
export class PostgresReads {
  constructor(
    private readonly pool: Pool,
    private readonly schema: string,
    private readonly session: string,
  ) {}

  /** One read on the pool; a driver error becomes `StorageIOError` naming the server, session and table. */
  async #all<R extends object>(
    table: string,
    text: string,
    values: readonly unknown[],
  ): Promise<R[]> {
    try {
      return (await query<R & Record<string, unknown>>(this.pool, text, [this.session, ...values]))
        .rows;
    } catch (error) {
      throw this.#failure(error, table);
    }
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
    const owner = filter.ownerTaskId;
    const after = startAfter(range.order, range.after);
    const { cmp, dir } = orderSql(range.order);
    const rows =
      owner === undefined
        ? await this.#all<IdRecordRow>(
            "conversations",
            `SELECT id, record FROM ${this.schema}.conversations WHERE session_key = $1 AND id ${cmp} $2 ORDER BY id ${dir} LIMIT $3`,
            [after, range.limit],
          )
        : await this.#all<IdRecordRow>(
            "conversations",
            `SELECT id, record FROM ${this.schema}.conversations WHERE session_key = $1 AND owner_task_id = $2 AND id ${cmp} $3 ORDER BY id ${dir} LIMIT $4`,
            [owner, after, range.limit],
          );
    return rows.map((r) => this.#parse<ConversationRecord>("conversations", r));
  }

  async entry(id: number): Promise<StoredEntry | undefined> {
    const [row] = await this.#all<{ commit_seq: number; record: string }>(
      "entries",
      `SELECT commit_seq, record FROM ${this.schema}.entries WHERE session_key = $1 AND id = $2`,
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
      const [row] = await this.#all<IdRecordRow>(
        "entries",
        `SELECT id, record FROM ${this.schema}.entries WHERE session_key = $1 AND conversation_id = $2 AND is_head AND id > $3 AND id <= $4 ORDER BY id DESC LIMIT 1`,
        [range.conversationId, range.lower, range.upper],
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
      found.push(
        ...(await this.#all<IdRecordRow>(
          "entries",
          `SELECT id, record FROM ${this.schema}.entries WHERE session_key = $1 AND conversation_id = $2 AND id > $3 AND id <= $4 ORDER BY id ${dir} LIMIT $5`,
          [range.conversationId, range.lower, range.upper, limit - found.length],
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
    const after = startAfter(range.order, range.after);
    const { cmp, dir } = orderSql(range.order);
    const params: unknown[] = [];
    const terms = ["session_key = $1"];
    TASK_FILTERS.forEach(([, column], i) => {
      if (values[i] === undefined) return;
      params.push(values[i]);
      terms.push(`${column} = $${params.length + 1}`);
    });
    params.push(after, range.limit);
    terms.push(`id ${cmp} $${params.length}`);
    const rows = await this.#all<IdRecordRow>(
      "tasks",
      `SELECT id, record FROM ${this.schema}.tasks WHERE ${terms.join(" AND ")} ORDER BY id ${dir} LIMIT $${params.length + 1}`,
      params,
    );
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
    const { conversationId, status } = filter;
    const after = startAfter(range.order, range.after);
    const { cmp, dir } = orderSql(range.order);
    const s = this.schema;
    const rows =
      status === undefined
        ? await this.#all<IdRecordRow>(
            "submissions",
            `SELECT id, record FROM ${s}.submissions WHERE session_key = $1 AND conversation_id = $2 AND id ${cmp} $3 ORDER BY id ${dir} LIMIT $4`,
            [conversationId, after, range.limit],
          )
        : await this.#all<IdRecordRow>(
            "submissions",
            `SELECT id, record FROM ${s}.submissions WHERE session_key = $1 AND conversation_id = $2 AND status = $3 AND id ${cmp} $4 ORDER BY id ${dir} LIMIT $5`,
            [conversationId, status, after, range.limit],
          );
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
    const after = startAfter(range.order, range.after);
    const { cmp, dir } = orderSql(range.order);
    const params: unknown[] = [scopeKey(filter.scope)];
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
    params.push(after, range.limit);
    terms.push(`id ${cmp} $${params.length}`);
    const rows = await this.#all<DocumentRow>(
      "documents",
      `SELECT ${DOCUMENT_COLUMNS} FROM ${this.schema}.documents WHERE ${terms.join(" AND ")} ORDER BY id ${dir} LIMIT $${params.length + 1}`,
      params,
    );
    return rows.map((row) => documentRecord(this.session, row));
  }
}
