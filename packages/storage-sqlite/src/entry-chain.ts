import { ENTRY_COLUMNS, type EntryRow, type RowReader } from "./rows.js";
import type { SqliteStatements } from "./sqlite-database.js";
import { readTipRow } from "./tips.js";

/**
 * The entry chains (README "Chains"). Every entry row names the entry
 * before it in its conversation (`prev`, in id order, 0 for the first), and
 * every head entry the head before it (`prev_head`); both are covered by the
 * row's checksum. `tips` holds each conversation's newest entry and
 * newest head under a checksum of their own. A read that walks a range of a
 * conversation's entries therefore knows which ids it must meet: a row the
 * b-tree or an index no longer returns (a damaged page header, a lost index
 * cell) leaves a link pointing at an id the read never saw, and the read
 * fails with `StorageCorrupted` naming it instead of returning a hole.
 */

export type Chain = "entries" | "heads";

export type LinkedRow = EntryRow & { id: number };

const FIRST_ABOVE = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND id > ? ORDER BY id LIMIT 1`;
// `head = 1` matches the partial index entries_heads word for word, so the planner uses it.
const FIRST_HEAD_ABOVE = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND id > ? AND head = 1 ORDER BY id LIMIT 1`;

/** A conversation's verified tip: its newest entry and newest head (0: none). */
export interface Tip {
  lastId: number;
  lastHead: number;
}

/** The verified tip of a conversation, or `undefined` when it has no tip row (no entries). */
export function readTip(
  db: SqliteStatements,
  rows: RowReader,
  conversationId: number,
): Tip | undefined {
  const row = readTipRow(db, rows, conversationId, "entries");
  return row === undefined ? undefined : { lastId: row.newest, lastHead: row.newest_head };
}

/** The link a row carries in `chain`. */
export function linkOf(row: EntryRow, chain: Chain): number {
  return chain === "entries" ? row.prev : row.prev_head;
}

/**
 * Checks that `found` (the newest id a read met in `lower < id <= upper`,
 * or `undefined` when it met none) is the newest entry (or head) of the
 * conversation at or before `upper`, as the chain says: the tip when it
 * lies at or before `upper`, else the link of the first entry (or head)
 * above `upper`, read and verified.
 */
export function checkNewestAtOrBelow(
  db: SqliteStatements,
  rows: RowReader,
  chain: Chain,
  range: { conversationId: number; lower: number; upper: number },
  found: number | undefined,
): void {
  const { conversationId, lower, upper } = range;
  const tip = readTip(db, rows, conversationId);
  const tipId = chain === "entries" ? (tip?.lastId ?? 0) : (tip?.lastHead ?? 0);
  let expected = tipId;
  let source = `its tip (tips id/chain ${conversationId}/entries)`;
  if (tipId > upper) {
    const above = db.get<LinkedRow>(chain === "entries" ? FIRST_ABOVE : FIRST_HEAD_ABOVE, [
      conversationId,
      upper,
    ]);
    if (above === undefined)
      throw missing(
        rows,
        chain,
        conversationId,
        tipId,
        `${source} names it, but no ${noun(chain)} after ${upper} is found`,
      );
    rows.entry(above.id, above);
    expected = linkOf(above, chain);
    source = `entry ${above.id}, the first ${noun(chain)} after ${upper}, links to it`;
  }
  const ok = found === undefined ? expected <= lower : expected === found;
  if (!ok)
    throw missing(
      rows,
      chain,
      conversationId,
      expected,
      `${source}, but reading ${noun(chain)}s ${lower + 1}..${upper} found ${found === undefined ? "none" : `${found} as the newest`}`,
    );
}

/**
 * Checks the links between rows read from one conversation's range, in scan
 * order (ascending or descending ids): each row must link to its neighbour
 * below. In ascending order the first row must link to nothing inside the
 * range; in descending order the same holds for the last row when the range
 * was read to its end (`exhausted`).
 */
export function checkLinks(
  rows: RowReader,
  chain: Chain,
  range: { conversationId: number; lower: number },
  read: readonly LinkedRow[],
  order: "ascending" | "descending",
  exhausted: boolean,
): void {
  const below = order === "ascending" ? -1 : 1;
  for (let i = 0; i < read.length; i++) {
    const row = read[i] as LinkedRow;
    const neighbour = read[i + below];
    const link = linkOf(row, chain);
    if (neighbour !== undefined) {
      if (link !== neighbour.id)
        throw missing(
          rows,
          chain,
          range.conversationId,
          link,
          `entry ${row.id} links to it as the ${noun(chain)} before it, but the read found ${neighbour.id} there`,
        );
    } else if ((order === "ascending" || exhausted) && link > range.lower)
      throw missing(
        rows,
        chain,
        range.conversationId,
        link,
        `entry ${row.id} links to it as the ${noun(chain)} before it, but the read found no ${noun(chain)} after ${range.lower} before ${row.id}`,
      );
  }
}

function noun(chain: Chain): string {
  return chain === "entries" ? "entry" : "head";
}

function missing(rows: RowReader, chain: Chain, conversationId: number, id: number, why: string) {
  return rows.corrupted(
    "entries",
    id,
    `${noun(chain)} ${id} of conversation ${conversationId} is missing: ${why} (a damaged page or index of the file dropped it)`,
  );
}

/**
 * Verifies what a scan read from one conversation's range (`read`, in scan
 * order, up to the number of rows it asked for): nothing missing between
 * the rows, below them when the range was read to its end, and above them
 * where the scan starts (descending) or ends (ascending, read to its end).
 */
export function checkEntryRange(
  db: SqliteStatements,
  rows: RowReader,
  range: { conversationId: number; lower: number; upper: number },
  read: readonly LinkedRow[],
  order: "ascending" | "descending",
  exhausted: boolean,
): void {
  checkLinks(rows, "entries", range, read, order, exhausted);
  if (order === "descending") checkNewestAtOrBelow(db, rows, "entries", range, read[0]?.id);
  else if (exhausted) checkNewestAtOrBelow(db, rows, "entries", range, read[read.length - 1]?.id);
}
