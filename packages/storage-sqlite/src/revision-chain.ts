import { REVISION_COLUMNS, type DocumentRow, type RevisionRow, type RowReader } from "./rows.js";
import type { SqliteStatements } from "./sqlite-database.js";
import { newestRevision } from "./tips.js";

const FIRST_ABOVE = `SELECT ${REVISION_COLUMNS} FROM document_revisions WHERE document_id = ? AND seq > ? ORDER BY seq LIMIT 1`;

/**
 * Checks that a materialisation read exactly the revisions the document
 * wrote from `from` (its governing base) up to `at`, independent of the
 * b-tree that returned them. Every revision names the one before it
 * (`prev_seq`, under its checksum) and the document's row in `tips` names
 * its newest (under the tip's checksum), so a revision the file no longer
 * returns (a damaged page header drops cells from the middle of a leaf)
 * shows as a link to a seq the read never met: `StorageCorrupted` naming the
 * document and the missing seq, never a value built without that delta.
 * `read` must already be verified against its checksums.
 */
export function checkRevisionChain(
  db: SqliteStatements,
  rows: RowReader,
  document: DocumentRow,
  from: number,
  at: number | "current",
  read: readonly RevisionRow[],
): void {
  const id = document.id;
  const missing = (seq: number, why: string) =>
    rows.corrupted(
      "document_revisions",
      `${id}/${seq}`,
      `revision seq ${seq} of document ${id} is missing: ${why} (a damaged page of the file dropped it)`,
    );
  // No base at all is the materialisation's to report; a base named but not met is a lost row.
  const first = read[0];
  if (from > 0 && first?.seq !== from)
    throw missing(
      from,
      `the read starts from its base at seq ${from}, but found ${first === undefined ? "nothing" : `seq ${first.seq} first`}`,
    );
  for (let i = 1; i < read.length; i++) {
    const row = read[i] as RevisionRow;
    const before = read[i - 1] as RevisionRow;
    if (row.prev_seq !== before.seq)
      throw missing(
        row.prev_seq,
        `revision seq ${row.seq} names it as the revision before it, but the read found seq ${before.seq} there`,
      );
  }
  const last = read[read.length - 1];
  if (last === undefined) return;
  const newest = newestRevision(db, rows, id);
  let expected = newest;
  let source = `the document's tip names it as its newest revision`;
  if (at !== "current" && at < newest) {
    const above = db.get<RevisionRow>(FIRST_ABOVE, [id, at]);
    if (above === undefined)
      throw missing(newest, `${source}, but no revision after seq ${at} is found`);
    rows.revision(id, above);
    expected = above.prev_seq;
    source = `revision seq ${above.seq}, the first after seq ${at}, names it as the revision before it`;
  }
  if (expected !== last.seq)
    throw missing(
      expected,
      `${source}, but the read up to ${at === "current" ? "the newest" : `seq ${at}`} ended at seq ${last.seq}`,
    );
}
