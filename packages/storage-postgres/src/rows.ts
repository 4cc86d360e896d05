import {
  StorageCorrupted,
  type CorruptionLocation,
  type DocumentRecord,
  type Json,
} from "@durably/core";

/**
 * Parses a stored JSON column. A row that does not parse, or is not an
 * object where a record must be, or whose id is not positive (Durably never
 * writes one; scans do not bound their open ends, so such a row reaches
 * here), is corruption reported with its table, row and session, so the
 * user can find it; it is never skipped.
 */
export function parseRecord<T>(session: string, table: string, id: number, text: string): T {
  if (!(Number.isSafeInteger(id) && id >= 1))
    throw new StorageCorrupted(
      `session ${JSON.stringify(session)} ${table}: the id column holds ${id}, not a positive integer (the row was damaged or written by something else)`,
      { table, key: `${session}/${id}` },
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StorageCorrupted(
      `session ${JSON.stringify(session)} ${table} id ${id}: the record column is not JSON`,
      { table, key: `${session}/${id}` },
      { cause: error },
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new StorageCorrupted(
      `session ${JSON.stringify(session)} ${table} id ${id}: the record column is not a JSON object`,
      { table, key: `${session}/${id}` },
    );
  return value as T;
}

/**
 * Where a revision row is, in the shape every adapter reports it:
 * `key` names the row as the session's rows are looked up (session /
 * document id / seq), with the document id and seq as numbers beside it.
 */
export function revisionLocation(
  session: string,
  documentId: number,
  seq: number,
): CorruptionLocation {
  return { table: "document_revisions", key: `${session}/${documentId}/${seq}`, documentId, seq };
}

export function parseContent(
  session: string,
  documentId: number,
  seq: number,
  kind: string,
  text: string,
): Json {
  const where = `session ${JSON.stringify(session)} document_revisions document_id ${documentId} seq ${seq}`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StorageCorrupted(
      `${where}: the content column is not JSON`,
      revisionLocation(session, documentId, seq),
      { cause: error },
    );
  }
  if (kind === "delta" && !Array.isArray(value))
    throw new StorageCorrupted(
      `${where}: a delta's content must be an ops array`,
      revisionLocation(session, documentId, seq),
    );
  return value as Json;
}

export interface DocumentRow {
  id: number;
  created_at: number;
  retired_at: number | null;
  rewindable: boolean;
  version: number;
  base_seq: number;
  record: string;
}

export const DOCUMENT_COLUMNS = "id, created_at, retired_at, rewindable, version, base_seq, record";

/** The stored record plus the seqs storage stamped on it. */
export function documentRecord(session: string, row: DocumentRow): DocumentRecord {
  const record = parseRecord<DocumentRecord>(session, "documents", row.id, row.record);
  record.createdAt = row.created_at as DocumentRecord["createdAt"];
  if (row.retired_at !== null) record.retiredAt = row.retired_at as DocumentRecord["createdAt"];
  return record;
}

export function isLiveRow(
  row: Pick<DocumentRow, "created_at" | "retired_at">,
  at: number | "current",
): boolean {
  if (at === "current") return row.retired_at === null;
  return row.created_at <= at && (row.retired_at === null || at < row.retired_at);
}
