import type { Pool, PoolClient } from "pg";

/**
 * The database is not one this storage can keep its promises on. Raised at
 * open, before anything is written; `setting` names what is wrong.
 */
export class UnsupportedDatabase extends Error {
  override readonly name = "UnsupportedDatabase";
  readonly code = "POSTGRES_UNSUPPORTED_DATABASE";
  constructor(
    message: string,
    readonly setting: string,
    readonly value: string,
  ) {
    super(message);
  }
}

/**
 * Refuses a database whose encoding is not UTF8. Keys and values are
 * JavaScript strings: in another encoding a character it lacks fails a
 * commit long after open (or, under SQL_ASCII, is stored unchecked), and
 * the hosts' lock order (session keys by their UTF-8 bytes, `COLLATE "C"`)
 * holds only when the server compares UTF-8 bytes too.
 */
export async function checkServer(client: PoolClient, caller: string): Promise<void> {
  const result = await client.query<{ encoding: string; database: string }>(
    "SELECT current_setting('server_encoding') AS encoding, current_database() AS database",
  );
  const row = result.rows[0];
  if (row !== undefined && row.encoding !== "UTF8")
    throw new UnsupportedDatabase(
      `${caller}: database ${JSON.stringify(row.database)} is encoded ${row.encoding}; Durably needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0)`,
      "server_encoding",
      row.encoding,
    );
}

/**
 * A pool of the caller's must allow at least `least` connections: one is
 * held for the host's liveness lock, so with fewer a commit would wait
 * forever for a free one.
 */
export function checkPoolSize(pool: Pool, least: number, caller: string): void {
  const max = (pool as Pool & { options?: { max?: unknown } }).options?.max;
  if (typeof max === "number" && max < least)
    throw new RangeError(
      `${caller}: the pool allows ${max} connection${max === 1 ? "" : "s"}; a host needs at least ${least} (one holds its liveness lock, the others commit and read)`,
    );
}
