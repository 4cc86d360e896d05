import {
  StorageCorrupted,
  type ConversationRecord,
  type CorruptionLocation,
  type DocumentRecord,
  type EntryRecord,
  type Json,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import { verifyColumns, verifyRow } from "./checksums.js";

/**
 * The rows as read back, with the columns their checksum covers. Every read
 * selects these lists, so every row a read returns is verified before use.
 */
export const CONVERSATION_COLUMNS = "id, owner_task_id, record, crc";
export const ENTRY_COLUMNS = "id, conversation_id, commit_seq, head, record, crc";
export const TASK_COLUMNS =
  "id, conversation_id, kind, status, abort_requested, background, owner, record, crc";
export const SUBMISSION_COLUMNS = "id, conversation_id, status, request_id, record, crc";
export const DOCUMENT_COLUMNS =
  "id, kind, key, scope, rewindable, created_at, retired_at, version, base_seq, record, crc, state_crc";
export const REVISION_COLUMNS = "document_id, seq, kind, content, version, crc";

export interface ConversationRow {
  id: number;
  owner_task_id: number | null;
  record: string;
  crc: number;
}

export interface EntryRow {
  id: number;
  conversation_id: number;
  commit_seq: number;
  head: number;
  record: string;
  crc: number;
}

export interface TaskRow {
  id: number;
  conversation_id: number;
  kind: string;
  status: string;
  abort_requested: number;
  background: number;
  owner: number | null;
  record: string;
  crc: number;
}

export interface SubmissionRow {
  id: number;
  conversation_id: number;
  status: string;
  request_id: string | null;
  record: string;
  crc: number;
}

export interface DocumentRow {
  id: number;
  kind: string;
  key: string | null;
  scope: string;
  rewindable: number;
  created_at: number;
  retired_at: number | null;
  version: number;
  base_seq: number;
  record: string;
  crc: number;
  state_crc: number;
}

export interface RevisionRow {
  document_id: number;
  seq: number;
  kind: string;
  content: string;
  version: number;
  crc: number;
}

/** The columns each table's checksum covers besides its content, in this order. */
export const checkedColumns = {
  conversation: (r: Omit<ConversationRow, "record" | "crc">) => [r.id, r.owner_task_id],
  entry: (r: Omit<EntryRow, "record" | "crc">) => [r.id, r.conversation_id, r.commit_seq, r.head],
  task: (r: Omit<TaskRow, "record" | "crc">) => [
    r.id,
    r.conversation_id,
    r.kind,
    r.status,
    r.abort_requested,
    r.background,
    r.owner,
  ],
  submission: (r: Omit<SubmissionRow, "record" | "crc">) => [
    r.id,
    r.conversation_id,
    r.status,
    r.request_id,
  ],
  /** The parts of a document row fixed at creation; `record` is the content. */
  document: (
    r: Pick<DocumentRow, "id" | "kind" | "key" | "scope" | "rewindable" | "created_at">,
  ) => [r.id, r.kind, r.key, r.scope, r.rewindable, r.created_at],
  /** The parts of a document row a later batch changes (a new base, retirement): `state_crc`. */
  documentState: (r: Pick<DocumentRow, "id" | "version" | "base_seq" | "retired_at">) => [
    r.id,
    r.version,
    r.base_seq,
    r.retired_at,
  ],
  revision: (r: Omit<RevisionRow, "content" | "crc">) => [r.document_id, r.seq, r.kind, r.version],
  counter: (name: string, value: number) => [name, value],
};

/**
 * Turns verified rows into records. A row whose checksum does not match, or
 * whose JSON does not parse (or is not an object where a record must be),
 * is corruption reported with the file, table and key, never skipped.
 */
export class RowReader {
  constructor(readonly file: string) {}

  #place(table: string, key: string | number, extra: CorruptionLocation = {}) {
    return { file: this.file, table, key: String(key), ...extra };
  }

  conversation(row: ConversationRow): ConversationRecord {
    verifyRow(
      `${this.file}: conversations id ${row.id}`,
      this.#place("conversations", row.id),
      row.crc,
      row.record,
      checkedColumns.conversation(row),
    );
    return this.#record("conversations", row.id, row.record);
  }

  entry(row: EntryRow): EntryRecord {
    verifyRow(
      `${this.file}: entries id ${row.id}`,
      this.#place("entries", row.id),
      row.crc,
      row.record,
      checkedColumns.entry(row),
    );
    return this.#record("entries", row.id, row.record);
  }

  task(row: TaskRow): TaskRecord {
    verifyRow(
      `${this.file}: tasks id ${row.id}`,
      this.#place("tasks", row.id),
      row.crc,
      row.record,
      checkedColumns.task(row),
    );
    return this.#record("tasks", row.id, row.record);
  }

  submission(row: SubmissionRow): SubmissionRecord {
    verifyRow(
      `${this.file}: submissions id ${row.id}`,
      this.#place("submissions", row.id),
      row.crc,
      row.record,
      checkedColumns.submission(row),
    );
    return this.#record("submissions", row.id, row.record);
  }

  /** Verifies a document row (both checksums) without parsing its record. */
  documentRow(row: DocumentRow): DocumentRow {
    const place = this.#place("documents", row.id, { documentId: row.id });
    verifyRow(
      `${this.file}: documents id ${row.id}`,
      place,
      row.crc,
      row.record,
      checkedColumns.document(row),
    );
    verifyColumns(
      `${this.file}: documents id ${row.id} (version, base and retirement)`,
      place,
      row.state_crc,
      checkedColumns.documentState(row),
    );
    return row;
  }

  /** The stored record plus the seqs storage stamped on it. */
  document(row: DocumentRow): DocumentRecord {
    return this.verifiedDocument(this.documentRow(row));
  }

  /** `document` for a row `documentRow` already verified. */
  verifiedDocument(row: DocumentRow): DocumentRecord {
    const record = this.#record<DocumentRecord>("documents", row.id, row.record);
    record.createdAt = row.created_at as DocumentRecord["createdAt"];
    if (row.retired_at !== null) record.retiredAt = row.retired_at as DocumentRecord["createdAt"];
    return record;
  }

  /** A revision's content (a base value or a delta's ops), verified and parsed. */
  revision(row: RevisionRow): Json {
    const where = `${this.file}: document_revisions document_id ${row.document_id} seq ${row.seq}`;
    const place = this.#place("document_revisions", `${row.document_id}/${row.seq}`, {
      documentId: row.document_id,
      seq: row.seq,
    });
    verifyRow(where, place, row.crc, row.content, checkedColumns.revision(row));
    let value: unknown;
    try {
      value = JSON.parse(row.content);
    } catch (error) {
      throw new StorageCorrupted(`${where}: the content column is not JSON`, place, {
        cause: error,
      });
    }
    if (row.kind === "delta" && !Array.isArray(value))
      throw new StorageCorrupted(`${where}: a delta's content must be an ops array`, place);
    return value as Json;
  }

  /** A counter row (`metadata`, `ids`), verified. */
  counter(table: string, name: string, value: number, crc: unknown): number {
    verifyColumns(
      `${this.file}: ${table} ${name}`,
      this.#place(table, name),
      crc,
      checkedColumns.counter(name, value),
    );
    return value;
  }

  #record<T>(table: string, id: number, text: string): T {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new StorageCorrupted(
        `${this.file}: ${table} id ${id}: the record column is not JSON`,
        this.#place(table, id),
        { cause: error },
      );
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new StorageCorrupted(
        `${this.file}: ${table} id ${id}: the record column is not a JSON object`,
        this.#place(table, id),
      );
    return value as T;
  }
}
