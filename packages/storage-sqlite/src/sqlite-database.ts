/**
 * The small SQLite port the storage core runs on. It is described by the
 * methods the core calls, not by any driver's types, so another synchronous
 * SQLite driver (node:sqlite, bun:sqlite, sql.js, ...) plugs in by
 * implementing these few methods; better-sqlite3 is the default adapter.
 */

/** A bound parameter: what every SQLite driver accepts. */
export type SqlValue = number | string | null;
export type SqlParams = readonly SqlValue[];

export interface RunResult {
  /** Rows inserted, updated or deleted by the statement. */
  changes: number;
}

/**
 * Statements run synchronously inside one driver call (a transaction or a
 * consistent read). Adapters are expected to cache prepared statements by
 * their SQL text: the core passes the same constant strings every time.
 */
export interface SqliteStatements {
  run(sql: string, params?: SqlParams): RunResult;
  get<Row>(sql: string, params?: SqlParams): Row | undefined;
  all<Row>(sql: string, params?: SqlParams): Row[];
}

export interface TransactionOptions {
  /**
   * The work only reads. The adapter may run it in `BEGIN DEFERRED … COMMIT`,
   * or without a transaction when nothing else can write between its
   * statements (a synchronous driver on an exclusively locked connection).
   */
  readOnly?: boolean;
}

export interface SqliteDatabase {
  exec(sql: string): Promise<void>;
  run(sql: string, params?: SqlParams): Promise<RunResult>;
  get<Row>(sql: string, params?: SqlParams): Promise<Row | undefined>;
  all<Row>(sql: string, params?: SqlParams): Promise<Row[]>;
  /**
   * Runs `work` inside `BEGIN IMMEDIATE … COMMIT` (or a read, see
   * `readOnly`) in one driver call. If `work` or the `COMMIT` throws, the
   * adapter rolls everything back and rejects with that error. `work` is
   * synchronous on purpose: one commit costs one facade call, not one
   * promise per statement.
   */
  transaction<T>(work: (db: SqliteStatements) => T, options?: TransactionOptions): Promise<T>;
  close(): Promise<void>;
}

/** True for SQLite's "database is locked / busy" errors, across the common drivers' error shapes. */
export function isBusyError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (typeof e.code === "string" && e.code.startsWith("SQLITE_BUSY")) return true;
  if (typeof e.errcode === "number" && (e.errcode & 0xff) === 5) return true;
  return typeof e.message === "string" && /database is locked/i.test(e.message);
}

/** True for "file is not a database" / "database disk image is malformed". */
export function isNotDatabaseError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (
    e.code === "SQLITE_NOTADB" ||
    (typeof e.code === "string" && e.code.startsWith("SQLITE_CORRUPT"))
  )
    return true;
  if (typeof e.errcode === "number" && ((e.errcode & 0xff) === 26 || (e.errcode & 0xff) === 11))
    return true;
  return typeof e.message === "string" && /file is not a database|malformed/i.test(e.message);
}
