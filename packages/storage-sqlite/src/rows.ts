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
import { scopeKey } from "@durably/core/storage";
import { columnText, rowMatches, type TipChain } from "./checksums.js";

/**
 * The rows as read back, with the columns their checksum covers. Every read
 * selects these lists (a read by id takes the id from its own argument), so
 * every row a read returns is verified before use.
 */
export const CONVERSATION_COLUMNS = "id, record, crc";
export const ENTRY_COLUMNS = "id, commit_seq, prev, prev_head, record, crc";
export const TASK_COLUMNS = "id, record, crc";
export const SUBMISSION_COLUMNS = "id, record, crc";
export const DOCUMENT_COLUMNS =
  "id, rewindable, created_at, retired_at, version, base_seq, record, crc, state_crc";
/** A revision range is read for one document: its id comes from the query. */
export const REVISION_COLUMNS = "seq, kind, content, version, prev_seq, crc";

/** A conversation, task or submission row: the record and its checksum. */
export interface RecordRow {
  record: string;
  crc: number;
}

export interface EntryRow extends RecordRow {
  commit_seq: number;
  /** The entry before this one in its conversation (id order), 0 for the first. */
  prev: number;
  /** For a head entry, the head before it in its conversation; 0 otherwise. */
  prev_head: number;
}

/** A row of `tips`: the newest end of a chain (see `tips.ts`). */
export interface TipRow {
  newest: number;
  /** A conversation's newest head; 0 for the other chains. */
  newest_head: number;
  crc: number;
}

export interface DocumentRow {
  id: number;
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
  seq: number;
  kind: string;
  content: string;
  version: number;
  /** The seq of the document's revision before this one, 0 for its first. */
  prev_seq: number;
  crc: number;
}

/**
 * Turns verified rows into records. A row whose checksum does not match, or
 * whose JSON does not parse (or is not an object where a record must be),
 * is corruption reported with the file, table and key, never skipped.
 */
export class RowReader {
  constructor(readonly file: string) {}

  conversation(id: number, row: RecordRow): ConversationRecord {
    if (!rowMatches(row.crc, row.record, columnText.conversation(id)))
      throw this.#mismatch("conversations", id);
    return this.#record("conversations", id, row.record);
  }

  entry(id: number, row: EntryRow): EntryRecord {
    if (
      !rowMatches(
        row.crc,
        row.record,
        columnText.entry(id, row.commit_seq, row.prev, row.prev_head),
      )
    )
      throw this.#mismatch("entries", id);
    return this.#record("entries", id, row.record);
  }

  task(id: number, row: RecordRow): TaskRecord {
    if (!rowMatches(row.crc, row.record, columnText.task(id))) throw this.#mismatch("tasks", id);
    return this.#record("tasks", id, row.record);
  }

  submission(id: number, row: RecordRow): SubmissionRecord {
    if (!rowMatches(row.crc, row.record, columnText.submission(id)))
      throw this.#mismatch("submissions", id);
    return this.#record("submissions", id, row.record);
  }

  /**
   * Fails when a verified record does not belong where the query found it
   * (an entry of another conversation in a conversation's range, a task
   * whose status is not the one scanned for): an index or an indexed column
   * is damaged, and the row must not be served as an answer to that query.
   */
  found<T>(
    table: string,
    id: number,
    record: T,
    belongs: (record: T) => boolean,
    query: string,
  ): T {
    if (!belongs(record))
      throw this.corrupted(
        table,
        id,
        `the row was found by ${query}, but its record does not match it: an index or an indexed column is damaged`,
      );
    return record;
  }

  /** Verifies a document row (both checksums) without parsing its record. */
  documentRow(row: DocumentRow): DocumentRow {
    const fixed = columnText.document(row.id, row.rewindable, row.created_at);
    if (!rowMatches(row.crc, row.record, fixed)) throw this.#mismatch("documents", row.id);
    const state = columnText.documentState(row.id, row.version, row.base_seq, row.retired_at);
    if (!rowMatches(row.state_crc, "", state))
      throw this.#mismatch("documents", row.id, "its version, base and retirement columns");
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

  /**
   * A verified document row and its record, checked against the address
   * that found it (kind, scope, key live in the record).
   */
  documentAt(
    row: DocumentRow,
    kind: string,
    scope: string,
    key: string | null,
  ): { row: DocumentRow; record: DocumentRecord } {
    const record = this.document(row);
    this.found(
      "documents",
      row.id,
      record,
      (r) => r.kind === kind && scopeKey(r.scope) === scope && (r.key ?? null) === key,
      `the address (kind ${JSON.stringify(kind)}, scope ${scope}, key ${JSON.stringify(key)})`,
    );
    return { row, record };
  }

  /** A revision's content (a base value or a delta's ops), verified and parsed. */
  revision(documentId: number, row: RevisionRow): Json {
    const columns = columnText.revision(documentId, row.seq, row.kind, row.version, row.prev_seq);
    const key = () => `${documentId}/${row.seq}`;
    if (!rowMatches(row.crc, row.content, columns))
      throw this.#mismatch("document_revisions", key());
    let value: unknown;
    try {
      value = JSON.parse(row.content);
    } catch (error) {
      throw this.corrupted("document_revisions", key(), "the content column is not JSON", error);
    }
    if (row.kind === "delta" && !Array.isArray(value))
      throw this.corrupted("document_revisions", key(), "a delta's content must be an ops array");
    return value as Json;
  }

  /** A row of `tips`, verified. */
  tip(id: number, chain: TipChain, row: TipRow): TipRow {
    if (!rowMatches(row.crc, "", columnText.tip(id, chain, row.newest, row.newest_head)))
      throw this.#mismatch("tips", `${id}/${chain}`);
    return row;
  }

  /** A counter row (`ids`), verified. */
  counter(table: string, name: string, value: number, crc: unknown): number {
    if (!rowMatches(crc, "", columnText.counter(name, value))) throw this.#mismatch(table, name);
    return value;
  }

  #record<T>(table: string, id: number, text: string): T {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw this.corrupted(table, id, "the record column is not JSON", error);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw this.corrupted(table, id, "the record column is not a JSON object");
    return value as T;
  }

  #mismatch(table: string, key: string | number, part = "the row"): StorageCorrupted {
    return this.corrupted(
      table,
      key,
      `${part} does not match its stored checksum: it was changed after it was written (a flipped byte, a torn page or an edit by hand)`,
    );
  }

  /** Names the row the way users look it up: `entries id 42`, `document_revisions 5/2` (document id / seq). */
  corrupted(
    table: string,
    key: string | number,
    problem: string,
    cause?: unknown,
  ): StorageCorrupted {
    const location: CorruptionLocation = { file: this.file, table, key: String(key) };
    if (table === "document_revisions" || table === "documents") {
      const [documentId, seq] = String(key).split("/").map(Number);
      Object.assign(location, { documentId }, seq === undefined ? {} : { seq });
    }
    const row =
      table === "document_revisions"
        ? `document_id/seq ${key}`
        : table === "tips"
          ? `id/chain ${key}`
          : `id ${key}`;
    return new StorageCorrupted(
      `${this.file}: ${table} ${row}: ${problem}`,
      location,
      cause === undefined ? undefined : { cause },
    );
  }
}
