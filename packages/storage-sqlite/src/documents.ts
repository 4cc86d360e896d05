import { StorageCorrupted, type DocumentContent, type Op } from "@durably/core";
import {
  materializeRevisions,
  type CurrentValue,
  type PlanDocument,
  type StoredRevision,
} from "@durably/core/storage";
import {
  DOCUMENT_COLUMNS,
  REVISION_COLUMNS,
  type DocumentRow,
  type RevisionRow,
  type RowReader,
} from "./rows.js";
import type { DocumentRecord } from "@durably/core";
import { checkRevisionChain } from "./revision-chain.js";
import type { SqliteStatements } from "./sqlite-database.js";

/** A document row by id (the id comes from the query); `readDocumentRow` verifies it. */
const SELECT_DOCUMENT =
  "SELECT rewindable, created_at, retired_at, version, base_seq, record, crc, state_crc FROM documents WHERE id = ?";
/** Incarnations at one address never overlap in time, so only the newest can be live. */
export const NEWEST_AT_ADDRESS = `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE kind = ? AND scope = ? AND key IS ? ORDER BY created_at DESC LIMIT 1`;
const NEWEST_BASE_AT = `SELECT seq FROM document_revisions WHERE document_id = ? AND seq <= ? AND kind = 'base' ORDER BY seq DESC LIMIT 1`;
const REVISION_RANGE = `SELECT ${REVISION_COLUMNS} FROM document_revisions WHERE document_id = ? AND seq >= ? AND seq <= ? ORDER BY seq`;

/** A verified document row by id, or `undefined`. */
export function readDocumentRow(
  db: SqliteStatements,
  rows: RowReader,
  id: number,
): DocumentRow | undefined {
  const row = db.get<DocumentRow>(SELECT_DOCUMENT, [id]);
  if (row === undefined) return undefined;
  row.id = id;
  return rows.documentRow(row);
}

/** The verified newest incarnation at an address, live or retired, with its record, or `undefined`. */
export function newestAtAddress(
  db: SqliteStatements,
  rows: RowReader,
  kind: string,
  scope: string,
  key: string | null,
): { row: DocumentRow; record: DocumentRecord } | undefined {
  const row = db.get<DocumentRow>(NEWEST_AT_ADDRESS, [kind, scope, key]);
  return row === undefined ? undefined : rows.documentAt(row, kind, scope, key);
}

/** What the planner and the read rules know of a document from its row. */
export function rowState(row: DocumentRow): PlanDocument {
  return {
    createdAt: row.created_at,
    retiredAt: row.retired_at ?? undefined,
    currentOnly: row.rewindable === 0,
    newestBaseSeq: row.base_seq,
  };
}

export function isLiveRow(row: DocumentRow, at: number | "current"): boolean {
  if (at === "current") return row.retired_at === null;
  return row.created_at <= at && (row.retired_at === null || at < row.retired_at);
}

/**
 * The revision rows a read at `at` needs, verified: the newest base at or
 * before `at` and its deltas up to `at`, one index range on
 * `document_revisions`, checked against the revision chain so that no
 * revision is silently left out. Where there is no such base (reclaimed
 * history), the range starts at 0 and materialisation reports the missing
 * base; callers skip history that is not kept (`isHistoryKept`).
 */
export function readRevisionRows(
  db: SqliteStatements,
  rows: RowReader,
  row: DocumentRow,
  at: number | "current",
): StoredRevision[] {
  const id = row.id;
  let from = row.base_seq;
  if (at !== "current" && at < row.base_seq)
    // A read before the newest base: walk back to the base that governs `at`.
    from = db.get<{ seq: number }>(NEWEST_BASE_AT, [id, at])?.seq ?? 0;
  const upper = at === "current" ? Number.MAX_SAFE_INTEGER : at;
  const read = db.all<RevisionRow>(REVISION_RANGE, [id, from, upper]);
  const revisions = read.map((r) => ({ seq: r.seq, content: revisionContent(rows, id, r) }));
  // After the checksums: the chain check trusts the links it reads.
  checkRevisionChain(db, rows, row, from, at, read);
  return revisions;
}

/** Where revisions are, for a corruption report. */
export function revisionsWhere(rows: RowReader): string {
  return `${rows.file}: table document_revisions`;
}

/** An incarnation's value at `at` (already known to be readable there), from its revision rows. */
export function valueFromRows(
  db: SqliteStatements,
  rows: RowReader,
  row: DocumentRow,
  at: number | "current",
): CurrentValue {
  return materializeRevisions(row.id, readRevisionRows(db, rows, row, at), revisionsWhere(rows));
}

function revisionContent(rows: RowReader, documentId: number, r: RevisionRow): DocumentContent {
  const parsed = rows.revision(documentId, r);
  if (r.kind === "base") return { kind: "base", version: r.version, value: parsed };
  if (r.kind === "delta")
    return { kind: "delta", version: r.version, ops: parsed as unknown as Op[] };
  // The CHECK constraint keeps this out; a file edited by hand could still hold it.
  throw new StorageCorrupted(
    `document_revisions document_id ${documentId} seq ${r.seq}: unknown revision kind ${JSON.stringify(r.kind)}`,
    { table: "document_revisions", documentId, seq: r.seq },
  );
}
