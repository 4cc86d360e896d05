import { StorageRequestError } from "@durably/core";
import { CheckedStorage } from "@durably/core/storage";
import { guarded } from "./driver-errors.js";
import { OPEN_CHECKS, type OpenCheck } from "./open-check.js";
import { takeOwnership } from "./ownership.js";
import { SqliteBackend } from "./sqlite-backend.js";
import type { SqliteDatabase, SqlValue } from "./sqlite-database.js";

export type SynchronousMode = "normal" | "full";

export interface SqliteStorageSettings {
  /** Names the database in error messages (the file path). */
  location: string;
  /** `"normal"` (default): process crashes lose nothing acknowledged. `"full"`: power loss neither. */
  synchronous?: SynchronousMode;
  /** Milliseconds SQLite waits on its own internal locks once the storage owns the file. Default 5000. */
  busyTimeoutMs?: number;
  /** False for `:memory:` databases. Default true. */
  persistent?: boolean;
  /**
   * The structural check at open: `"quick"` (default, `PRAGMA quick_check`),
   * `"full"` (`PRAGMA integrity_check`, which also compares indexes with
   * their tables) or `"none"`. See the README for what skipping it gives up.
   */
  openCheck?: OpenCheck;
}

/**
 * The Storage contract on SQLite, through the `SqliteDatabase` facade:
 * core's checked front over `SqliteBackend`. Open it with
 * `openSqliteStorage(path)` (better-sqlite3) or
 * `SqliteStorage.open(database, settings)` for another driver.
 */
export class SqliteStorage extends CheckedStorage {
  readonly location: string;
  readonly #backend: SqliteBackend;

  private constructor(backend: SqliteBackend) {
    super(backend);
    this.#backend = backend;
    this.location = backend.location;
  }

  /**
   * Takes ownership of the database (exclusive lock, WAL, schema migrated
   * forward in one transaction, counters loaded and verified). The database
   * is closed again if any step fails.
   */
  static async open(db: SqliteDatabase, settings: SqliteStorageSettings): Promise<SqliteStorage> {
    const { location } = settings;
    const synchronous = settings.synchronous ?? "normal";
    if (synchronous !== "normal" && synchronous !== "full")
      throw new TypeError(
        `synchronous must be "normal" or "full", got ${JSON.stringify(synchronous)}`,
      );
    const busyTimeoutMs = settings.busyTimeoutMs ?? 5000;
    const openCheck = settings.openCheck ?? "quick";
    if (!OPEN_CHECKS.includes(openCheck))
      throw new TypeError(
        `openCheck must be "quick", "full" or "none", got ${JSON.stringify(openCheck)}`,
      );
    const persistent = settings.persistent ?? true;
    try {
      const counters = await takeOwnership(db, {
        location,
        synchronous,
        busyTimeoutMs,
        persistent,
        openCheck,
      });
      return new SqliteStorage(new SqliteBackend(db, location, counters, { persistent }));
    } catch (error) {
      await db.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Runs a read-only `SELECT` (or `WITH … SELECT`) and returns its rows, for
   * showing what is stored (e.g. `ENTRY_ROWS_SQL`) without closing the
   * storage. It never writes: anything else is refused. Rows come back as
   * stored, without checksum verification.
   */
  async inspect<Row = Record<string, SqlValue>>(
    sql: string,
    params: readonly SqlValue[] = [],
  ): Promise<Row[]> {
    this.guard();
    if (!/^\s*(SELECT|WITH)\b/i.test(sql) || /;\s*\S/.test(sql))
      throw new StorageRequestError("bad-argument", "inspect runs a single SELECT statement only");
    return guarded(this.location, "inspecting", {}, () =>
      this.#backend.database.all<Row>(sql, params),
    );
  }
}
