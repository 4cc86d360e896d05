import { statSync, type Stats } from "node:fs";
import { dirname, resolve } from "node:path";
import { StorageIOError } from "@durably/core";
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
    throw unopenablePath(path, error);
  }
  return SqliteStorage.open(database, {
    location: path,
    ...(options.synchronous !== undefined ? { synchronous: options.synchronous } : {}),
    ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
    ...(options.openCheck !== undefined ? { openCheck: options.openCheck } : {}),
    persistent: path !== ":memory:",
  });
}

/**
 * The driver's refusal to open `path` as a typed `StorageIOError` naming the
 * file (`location.file`) and what is wrong with the path, with the driver's
 * error as `cause`. The reason is found by looking at the path itself (the
 * driver only says "unable to open database file", or throws a plain
 * `TypeError` for a missing directory): a directory where the file should
 * be, a missing parent directory, or a regular file where the path needs a
 * directory. Nothing is created or changed on the way.
 */
function unopenablePath(path: string, error: unknown): Error {
  const detail = error instanceof Error ? error.message : String(error);
  const refuse = (why: string): StorageIOError =>
    new StorageIOError(
      `${path}: cannot open the SQLite file: ${why}; nothing was created or changed (driver: ${detail})`,
      { file: path },
      { cause: error },
    );
  if (path !== ":memory:" && !path.startsWith("file:")) {
    const own = stat(path);
    if (own !== undefined && typeof own !== "string" && own.isDirectory())
      return refuse("it is a directory, not a file");
    if (own === "ENOENT" || own === "ENOTDIR") {
      // Walk up to the nearest part of the path that exists: it must be a directory.
      let child = resolve(path);
      let parent = dirname(child);
      while (parent !== child) {
        const found = stat(parent);
        if (found !== undefined && typeof found !== "string") {
          if (!found.isDirectory())
            return refuse(`${parent} in its path is not a directory (a file is in the way)`);
          if (parent !== dirname(resolve(path)))
            return refuse(`its parent directory ${dirname(resolve(path))} does not exist`);
          break;
        }
        if (found !== "ENOENT" && found !== "ENOTDIR") break;
        child = parent;
        parent = dirname(parent);
      }
    }
    if (typeof own === "string" && own !== "ENOENT" && own !== "ENOTDIR")
      return refuse(`the path cannot be looked at (${own})`);
  }
  if (error instanceof Error && (error as { code?: unknown }).code === "SQLITE_CANTOPEN")
    return refuse("SQLite cannot open it");
  // Anything else the driver threw: keep it, naming the file its message does not.
  if (error instanceof Error) error.message = `${path}: ${error.message}`;
  return error instanceof Error ? error : new Error(`${path}: ${detail}`);
}

/** `statSync` of the path (following links, as SQLite does), or the error code that stopped it. */
function stat(path: string): Stats | string | undefined {
  try {
    return statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return typeof code === "string" ? code : undefined;
  }
}
