import {
  StorageCorrupted,
  StorageRequestError,
  type DocumentContent,
  type Json,
  type Op,
} from "@durably/core";
import {
  historyUnavailable,
  materializeRevisions,
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

/** A document's value at one point: what `document()` returns besides the record. */
export interface MaterializedValue {
  version: number;
  value: Json;
  deltasSinceBase: number;
}

/** A live document's current value plus what writes need to know about it. */
export interface DocumentValue extends MaterializedValue {
  rewindable: number;
}

export function isLiveRow(row: DocumentRow, at: number | "current"): boolean {
  if (at === "current") return row.retired_at === null;
  return row.created_at <= at && (row.retired_at === null || at < row.retired_at);
}

/**
 * Materialises an incarnation already known to be live at `at` from its
 * revision rows: the newest base at or before `at` plus its delta tail, one
 * index range on `document_revisions`. Current-only documents answer only
 * at or after their newest base, and not at all once retired (their
 * revisions are reclaimed), whether or not the rows are physically gone.
 */
export function readDocumentRows(
  db: SqliteStatements,
  rows: RowReader,
  row: DocumentRow,
  at: number | "current",
): MaterializedValue {
  const id = row.id;
  if (row.rewindable === 0 && at !== "current") {
    if (row.retired_at !== null)
      throw new StorageRequestError(
        "history-unavailable",
        `document ${id} keeps only its current value and was retired at seq ${row.retired_at}: seq ${at} is no longer readable`,
      );
    if (at < row.base_seq) throw historyUnavailable(id, at, row.base_seq);
  }
  let from = row.base_seq;
  if (at !== "current" && at < row.base_seq) {
    // A rewindable read before the newest base: walk back to the base that governs `at`.
    // No base at all leaves `from` at 0, and materialisation reports the missing base.
    from = db.get<{ seq: number }>(NEWEST_BASE_AT, [id, at])?.seq ?? 0;
  }
  const upper = at === "current" ? Number.MAX_SAFE_INTEGER : at;
  const revisions: StoredRevision[] = db
    .all<RevisionRow>(REVISION_RANGE, [id, from, upper])
    .map((r) => ({ seq: r.seq, content: revisionContent(rows, id, r) }));
  return materializeRevisions(id, revisions, `${rows.file}: table document_revisions`);
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

/**
 * Committed current values of recently written documents, so a delta can be
 * checked against (and applied to) the current value without reading the
 * revision tail back. Bounded: a miss is one materialisation.
 */
export class CurrentValues {
  readonly #values = new Map<number, DocumentValue>();
  readonly #limit: number;

  constructor(limit = 1024) {
    this.#limit = limit;
  }

  get(id: number): DocumentValue | undefined {
    const value = this.#values.get(id);
    if (value !== undefined) {
      // Refresh recency: Map iteration order is insertion order.
      this.#values.delete(id);
      this.#values.set(id, value);
    }
    return value;
  }

  set(id: number, value: DocumentValue): void {
    this.#values.delete(id);
    this.#values.set(id, value);
    if (this.#values.size > this.#limit) {
      const oldest = this.#values.keys().next();
      if (!oldest.done) this.#values.delete(oldest.value);
    }
  }

  delete(id: number): void {
    this.#values.delete(id);
  }
}
