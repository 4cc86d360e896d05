import { StorageCorrupted, type CorruptionLocation } from "@durably/core";
import pg from "pg";
import { INT8_OID, isSafeBigintText, UnsafeBigint, type Runner } from "./queries.js";

/**
 * Bigint columns holding a value beyond JavaScript's safe integers: a row
 * damaged, edited by hand or written by something else. Such a value is
 * never rounded and never skipped: it is reported as `StorageCorrupted`
 * naming the session, table, column and row.
 */

/** Bigints as the server's text, whatever parser the application set globally. */
const RAW = new pg.TypeOverrides();
RAW.setTypeParser(INT8_OID, (text: string) => text);

/** Where a bigint beyond the safe integers was met. */
export interface UnsafePlace {
  session: string;
  table: string;
  /** Unknown when the value could not be found again. */
  column?: string;
  value: string;
  /** The row's id (or document id, for a revision), when the read selected it. */
  id?: string;
}

export function unsafeBigint(place: UnsafePlace, cause?: unknown): StorageCorrupted {
  const { session, table, column, value, id } = place;
  const row =
    id === undefined ? "" : ` ${table === "document_revisions" ? "document_id" : "id"} ${id}`;
  const what = column === undefined ? "a bigint column" : `the ${column} column`;
  const location: CorruptionLocation = {
    table,
    key: id === undefined ? session : `${session}/${id}`,
  };
  // A document's rows carry its id as a number too, as every adapter reports them.
  if (id !== undefined && isSafeBigintText(id) && table.startsWith("document"))
    Object.assign(location, { documentId: Number(id) });
  return new StorageCorrupted(
    `session ${JSON.stringify(session)} ${table}${row}: ${what} holds ${value}, beyond JavaScript's safe integers (the row was damaged or written by something else)`,
    location,
    cause === undefined ? undefined : { cause },
  );
}

/** A cell of a re-read row holding an unsafe bigint. */
export interface UnsafeCell {
  column: string;
  value: string;
  row: Record<string, unknown>;
}

/**
 * Runs a read again with bigints as text, to find the column and row of the
 * value the parser refused (it sees neither). Only for SELECTs, since the
 * statement runs twice; it is the corruption path, never the hot one.
 * Undefined when the value is gone by then or the read fails.
 */
export async function findUnsafe(
  runner: Runner,
  text: string,
  values: readonly unknown[],
): Promise<UnsafeCell | undefined> {
  try {
    const result = await runner.query({ text, values: values as unknown[], types: RAW });
    const columns = result.fields.filter((f) => f.dataTypeID === INT8_OID).map((f) => f.name);
    for (const row of result.rows as Record<string, unknown>[])
      for (const column of columns) {
        const value = row[column];
        if (typeof value === "string" && !isSafeBigintText(value)) return { column, value, row };
      }
  } catch {
    // The caller reports the value without its column.
  }
  return undefined;
}

/**
 * The `StorageCorrupted` for a read of `table` that met `error`, naming the
 * column and row when a re-read finds them. `place` maps a column of a
 * joined read to its table and name; by default it is `table`'s own.
 */
export async function locateUnsafe(
  error: UnsafeBigint,
  read: { runner: Runner; text: string; values: readonly unknown[] },
  session: string,
  table: string,
  place: (column: string) => { table: string; column: string } = (column) => ({ table, column }),
): Promise<StorageCorrupted> {
  const cell = await findUnsafe(read.runner, read.text, read.values);
  if (cell === undefined) return unsafeBigint({ session, table, value: error.text }, error);
  const id = cell.row.id;
  return unsafeBigint(
    {
      session,
      ...place(cell.column),
      value: cell.value,
      ...(typeof id === "string" ? { id } : {}),
    },
    error,
  );
}

const MAX = Number.MAX_SAFE_INTEGER;

/**
 * The session row's counters a take-over may return, as SQL: each a safe
 * integer that leaves room for the next one this storage derives from it
 * (the first seq, the first id after the high-water mark, the take-over's
 * token). A row failing it is not taken, and `checkSessionRow` names why.
 */
export const SESSION_COUNTERS = {
  next_seq: MAX,
  high_water: MAX - 1,
  lease_token: MAX - 1,
} as const;

export function sessionCountersSql(alias: string): string {
  return Object.entries(SESSION_COUNTERS)
    .map(([column, max]) => `${alias}.${column} BETWEEN ${-MAX} AND ${max}`)
    .join(" AND ");
}

/** Refuses a session row whose counters (read as text) fall outside `SESSION_COUNTERS`. */
export function checkSessionRow(
  session: string,
  row: { readonly [C in keyof typeof SESSION_COUNTERS]: unknown },
): void {
  for (const [column, max] of Object.entries(SESSION_COUNTERS)) {
    const value = row[column as keyof typeof SESSION_COUNTERS];
    if (typeof value !== "string") continue;
    if (!isSafeBigintText(value)) throw unsafeBigint({ session, table: "sessions", column, value });
    if (Number(value) > max)
      throw new StorageCorrupted(
        `session ${JSON.stringify(session)} sessions: the ${column} column holds ${value}, and the next value after it would be beyond JavaScript's safe integers (the row was damaged or written by something else)`,
        { table: "sessions", key: session },
      );
  }
}
