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
  /** The first row. It may stop the statement there (better-sqlite3 does), so the storage never uses it where the work continues after the answer. */
  get<Row>(sql: string, params?: SqlParams): Promise<Row | undefined>;
  /** Every row; runs the statement to its end and rejects with any error it meets on the way (the storage sets its mode pragmas through it). */
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

/**
 * The primary result code of a driver error (`SQLITE_BUSY` for
 * `SQLITE_BUSY_SNAPSHOT`), from a numeric `errcode` (node:sqlite, bun) or a
 * `SQLITE_*` string `code` (better-sqlite3); `undefined` when the driver gave
 * neither, and the message is all there is to go on.
 */
function primaryCode(error: unknown): number | string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as { code?: unknown; errcode?: unknown };
  if (typeof e.errcode === "number") return e.errcode & 0xff;
  if (typeof e.code === "string" && e.code.startsWith("SQLITE_")) {
    const match = /^SQLITE_[A-Z]+/.exec(e.code);
    return match?.[0];
  }
  return undefined;
}

function message(error: unknown): string {
  const m = (error as { message?: unknown } | null)?.message;
  return typeof m === "string" ? m : "";
}

/** True for SQLite's "database is locked / busy" errors, across the common drivers' error shapes. */
export function isBusyError(error: unknown): boolean {
  const code = primaryCode(error);
  if (code !== undefined) return code === 5 || code === "SQLITE_BUSY";
  return /database is locked/i.test(message(error));
}

/** True for "file is not a database" (`SQLITE_NOTADB`) and "database disk image is malformed" (`SQLITE_CORRUPT`). */
export function isNotDatabaseError(error: unknown): boolean {
  const code = primaryCode(error);
  if (code !== undefined)
    return code === 11 || code === 26 || code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB";
  return /file is not a database|database disk image is malformed/i.test(message(error));
}

/** True for SQLite's I/O failures: `SQLITE_IOERR` (and its extended codes) and `SQLITE_FULL` (disk full). */
export function isIoError(error: unknown): boolean {
  const code = primaryCode(error);
  if (code !== undefined)
    return code === 10 || code === 13 || code === "SQLITE_IOERR" || code === "SQLITE_FULL";
  return /disk I\/O error|database or disk is full/i.test(message(error));
}
