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

/** One row of `tips` a commit call moves. */
export interface TipWrite {
  id: number;
  chain: TipChain;
  newest: number;
  newestHead: number;
}

/**
 * Rows per upsert statement. A call's tips go out in a few multi-row
 * statements instead of one statement per chain end: a statement run costs
 * about as much as the row it writes. Fixed chunks keep the number of
 * distinct statement texts (each prepared once) at this many.
 */
const ROWS_PER_STATEMENT = 32;
const upsertTexts: string[] = [];

function upsertText(rows: number): string {
  let text = upsertTexts[rows];
  if (text === undefined) {
    const values = new Array<string>(rows).fill("(?, ?, ?, ?, ?)").join(", ");
    text = `INSERT INTO tips (id, chain, newest, newest_head, crc) VALUES ${values}
  ON CONFLICT (id, chain) DO UPDATE SET newest = excluded.newest, newest_head = excluded.newest_head, crc = excluded.crc`;
    upsertTexts[rows] = text;
  }
  return text;
}

/** Writes (or moves) the ends of chains, each `(id, chain)` at most once. */
export function writeTips(db: SqliteStatements, tips: readonly TipWrite[]): void {
  for (let from = 0; from < tips.length; from += ROWS_PER_STATEMENT) {
    const rows = Math.min(ROWS_PER_STATEMENT, tips.length - from);
    const params: (number | string)[] = [];
    for (let i = from; i < from + rows; i++) {
      const { id, chain, newest, newestHead } = tips[i] as TipWrite;
      const crc = rowCrc("", columnText.tip(id, chain, newest, newestHead));
      params.push(id, chain, newest, newestHead, crc);
    }
    db.run(upsertText(rows), params);
  }
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
