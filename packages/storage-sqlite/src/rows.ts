import { StorageCorrupted, type DocumentRecord, type Json } from "@durably/core";

/**
 * Parses a JSON column. A row that does not parse (or is not an object
 * where a record must be) is corruption, reported with its table and id so
 * the user can find the row; it is never skipped.
 */
export function parseRecord<T>(table: string, id: number, text: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StorageCorrupted(
      `${table} id ${id}: the record column is not JSON`,
      { table, key: String(id) },
      { cause: error },
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new StorageCorrupted(`${table} id ${id}: the record column is not a JSON object`, {
      table,
      key: String(id),
    });
  return value as T;
}

/** Parses a revision's content column (a base value or a delta's ops). */
export function parseRevisionContent(
  documentId: number,
  seq: number,
  kind: string,
  text: string,
): Json {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StorageCorrupted(
      `document_revisions document_id ${documentId} seq ${seq}: the content column is not JSON`,
      { table: "document_revisions", documentId, seq },
      { cause: error },
    );
  }
  if (kind === "delta" && !Array.isArray(value))
    throw new StorageCorrupted(
      `document_revisions document_id ${documentId} seq ${seq}: a delta's content must be an ops array`,
      {
        table: "document_revisions",
        documentId,
        seq,
      },
    );
  return value as Json;
}

export interface DocumentRow {
  id: number;
  created_at: number;
  retired_at: number | null;
  rewindable: number;
  version: number;
  base_seq: number;
  record: string;
}

export const DOCUMENT_COLUMNS = "id, created_at, retired_at, rewindable, version, base_seq, record";

/** The stored record plus the seqs storage stamped on it. */
export function documentRecord(row: DocumentRow): DocumentRecord {
  const record = parseRecord<DocumentRecord>("documents", row.id, row.record);
  record.createdAt = row.created_at as DocumentRecord["createdAt"];
  if (row.retired_at !== null) record.retiredAt = row.retired_at as DocumentRecord["createdAt"];
  return record;
}
