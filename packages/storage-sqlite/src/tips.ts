import { columnText, rowCrc, type TipChain } from "./checksums.js";
import type { RowReader, TipRow } from "./rows.js";
import type { SqliteStatements } from "./sqlite-database.js";

/**
 * The `tips` table (schema version 5): the newest end of every chain and
 * the seq counter, one small row each under its own checksum. A
 * conversation's row (chain `entries`) names its newest entry and newest
 * head, a document's row (chain `revisions`) its newest revision, and row 0
 * (chain `seq`) the next seq. Ids are unique across conversations and
 * documents as the Session mints them, but the port lets a caller pick any
 * fresh id per kind, so the chain is part of the key. Keeping them in one
 * table keeps a commit's tip writes on one b-tree page (a conversation and
 * its documents are minted together, so their ids sit side by side).
 */

const SELECT_TIP = "SELECT newest, newest_head, crc FROM tips WHERE id = ? AND chain = ?";
const UPSERT_TIP = `INSERT INTO tips (id, chain, newest, newest_head, crc) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (id, chain) DO UPDATE SET newest = excluded.newest, newest_head = excluded.newest_head, crc = excluded.crc`;

/** Writes (or moves) the end of a chain. */
export function writeTip(
  db: SqliteStatements,
  id: number,
  chain: TipChain,
  newest: number,
  newestHead = 0,
): void {
  const crc = rowCrc("", columnText.tip(id, chain, newest, newestHead));
  db.run(UPSERT_TIP, [id, chain, newest, newestHead, crc]);
}

/** The verified end of a chain, or `undefined` when it has no row. */
export function readTipRow(
  db: SqliteStatements,
  rows: RowReader,
  id: number,
  chain: TipChain,
): TipRow | undefined {
  const row = db.get<TipRow>(SELECT_TIP, [id, chain]);
  return row === undefined ? undefined : rows.tip(id, chain, row);
}

/**
 * The seq of a document's newest revision, from its tip. Every document
 * gets its tip with its first revision, so a missing row is a lost row.
 */
export function newestRevision(db: SqliteStatements, rows: RowReader, documentId: number): number {
  const tip = readTipRow(db, rows, documentId, "revisions");
  if (tip === undefined)
    throw rows.corrupted(
      "tips",
      `${documentId}/revisions`,
      `document ${documentId} has no tip row naming its newest revision: the row is lost`,
    );
  return tip.newest;
}
