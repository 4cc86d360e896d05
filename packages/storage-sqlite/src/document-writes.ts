import { columnText, rowCrc } from "./checksums.js";
import type { DocumentRow } from "./rows.js";
import type { SqliteStatements } from "./sqlite-database.js";

/**
 * The writes that keep a document's revision chain (see `revision-chain.ts`):
 * each revision names the one before it (`prev_seq`), and the document's
 * row in `tips` names its newest, both under checksums, so a read notices a
 * revision the file no longer returns.
 */

const INSERT_REVISION =
  "INSERT INTO document_revisions (document_id, seq, kind, content, version, prev_seq, crc) VALUES (?, ?, ?, ?, ?, ?, ?)";
const SET_BASE = "UPDATE documents SET version = ?, base_seq = ?, state_crc = ? WHERE id = ?";
const RETIRE = "UPDATE documents SET retired_at = ?, state_crc = ? WHERE id = ?";

/**
 * Stores a revision linked to the document's revision before it (`prevSeq`,
 * 0 for its first). The caller moves the document's tip to it (written once
 * per call, with the call's other tips).
 */
export function insertRevision(
  db: SqliteStatements,
  documentId: number,
  seq: number,
  kind: "base" | "delta",
  json: string,
  version: number,
  prevSeq: number,
): void {
  const crc = rowCrc(json, columnText.revision(documentId, seq, kind, version, prevSeq));
  db.run(INSERT_REVISION, [documentId, seq, kind, json, version, prevSeq, crc]);
}

/** A new base at `seq` became the governing base (the document row's version and base). */
export function setBase(db: SqliteStatements, id: number, version: number, seq: number): void {
  db.run(SET_BASE, [version, seq, stateCrc(id, version, seq, null), id]);
}

/** Marks the incarnation retired at `seq`, keeping the rest of its state. */
export function retire(db: SqliteStatements, row: DocumentRow, seq: number): void {
  db.run(RETIRE, [seq, stateCrc(row.id, row.version, row.base_seq, seq), row.id]);
}

/** The checksum of a document row's changing part. */
export function stateCrc(
  id: number,
  version: number,
  baseSeq: number,
  retiredAt: number | null,
): number {
  return rowCrc("", columnText.documentState(id, version, baseSeq, retiredAt));
}
