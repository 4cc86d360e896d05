import { BetterSqlite3Database } from "./better-sqlite3-database.js";
import type { OpenCheck } from "./open-check.js";
import { SqliteStorage, type SynchronousMode } from "./sqlite-storage.js";

export interface OpenSqliteStorageOptions {
  /**
   * `"normal"` (default): WAL with `synchronous = NORMAL`; a process crash
   * loses nothing acknowledged, a power loss may lose the newest commits.
   * `"full"`: every commit is fsynced before it is acknowledged.
   */
  synchronous?: SynchronousMode;
  /** Milliseconds SQLite waits on its own internal locks once the storage owns the file. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * The structural check of the whole file at open, before anything is read.
   * `"quick"` (default): `PRAGMA quick_check`, which finds rows dropped by a
   * damaged b-tree page. `"full"`: `PRAGMA integrity_check`, which also
   * compares every index with its table (slower). `"none"`: no check; open
   * time no longer grows with the file, but damage the check would have found
   * is then only found by the reads that meet it (see the README).
   */
  openCheck?: OpenCheck;
}

/**
 * Opens (creating if needed) the SQLite file at `path` as a Durably storage,
 * on better-sqlite3. The file is owned exclusively until `close()` or the
 * process ends; a second open fails with `StorageLocked`.
 */
export async function openSqliteStorage(
  path: string,
  options: OpenSqliteStorageOptions = {},
): Promise<SqliteStorage> {
  if (typeof path !== "string" || path === "")
    throw new TypeError(`openSqliteStorage: path must be a file path, got ${JSON.stringify(path)}`);
  let database: BetterSqlite3Database;
  try {
    database = BetterSqlite3Database.open(path);
  } catch (error) {
    // The driver's message ("unable to open database file") does not say which file.
    if (error instanceof Error) error.message = `${path}: ${error.message}`;
    throw error;
  }
  return SqliteStorage.open(database, {
    location: path,
    ...(options.synchronous !== undefined ? { synchronous: options.synchronous } : {}),
    ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
    ...(options.openCheck !== undefined ? { openCheck: options.openCheck } : {}),
    persistent: path !== ":memory:",
  });
}
