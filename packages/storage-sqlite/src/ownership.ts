import {
  StorageCorrupted,
  StorageIOError,
  StorageLocked,
  StorageVersionError,
} from "@durably/core";
import type { Counters } from "./apply-plans.js";
import { typedDriverError } from "./driver-errors.js";
import { checkStructure, type OpenCheck } from "./open-check.js";
import { RowReader } from "./rows.js";
import { migrate, refuseNewer, SCHEMA_VERSION, schemaReads } from "./schema.js";
import { readTipRow } from "./tips.js";
import {
  isBusyError,
  isIoError,
  isNotDatabaseError,
  type SqliteDatabase,
  type SqliteStatements,
} from "./sqlite-database.js";

/**
 * The size the write-ahead log is cut back to when SQLite restarts it after
 * a checkpoint. Steady commits keep the log under about 4 MiB (SQLite's
 * automatic checkpoint every 1000 pages), so this never truncates in steady
 * state and costs nothing there; it only gives the space back after a
 * commit larger than that (a big document base) made the log grow.
 */
export const WAL_SIZE_LIMIT = 8 * 1024 * 1024;

export interface OwnershipSettings {
  location: string;
  synchronous: "normal" | "full";
  busyTimeoutMs: number;
  /** False for an in-memory database, whose journal mode stays `memory`. */
  persistent: boolean;
  /** The structural check run before anything is read. */
  openCheck: OpenCheck;
}

/**
 * Takes ownership of the database. Nothing is written to the file until it
 * is known to be ours: the connection first asks for exclusive locking (a
 * setting of the connection, no I/O), then decides, reading only and under
 * the file's exclusive lock, whether the file is empty or a Durably file of
 * a version this package understands; a foreign file or a newer version is
 * refused there, leaving it byte for byte as it was (no header change, no
 * `-wal`). Then the structural check of the whole file (unless skipped),
 * the switch to WAL, the schema migrated forward in one transaction and the
 * counters loaded, then the synchronous mode and the busy timeout. Errors
 * come out typed: `StorageLocked` for a live owner, `StorageCorrupted` for
 * a file that is not a readable database or not a Durably one,
 * `StorageVersionError` for a newer schema, `StorageIOError` for a failing
 * disk.
 */
export async function takeOwnership(
  db: SqliteDatabase,
  settings: OwnershipSettings,
): Promise<Counters> {
  const { location } = settings;
  try {
    // No waiting while taking the lock: a live owner means "fail now, clearly".
    await db.exec("PRAGMA busy_timeout = 0");
    await setMode(db, location, "locking_mode", "EXCLUSIVE", ["exclusive"]);
    const version = await decideOwnership(db, location);
    await checkStructure(
      db,
      location,
      settings.openCheck === "none" && version < SCHEMA_VERSION ? "quick" : settings.openCheck,
    );
    await setMode(db, location, "journal_mode", "WAL", settings.persistent ? ["wal"] : ["memory"]);
    await db.get(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT}`);
    const counters = await db.transaction((tx) => {
      migrate(tx, location);
      return readCounters(tx, new RowReader(location));
    });
    await db.exec(`PRAGMA synchronous = ${settings.synchronous === "full" ? "FULL" : "NORMAL"}`);
    await db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(settings.busyTimeoutMs))}`);
    return counters;
  } catch (error) {
    // The open check's and the ownership decision's own reports already name the file.
    if (error instanceof StorageCorrupted || error instanceof StorageVersionError) throw error;
    if (isBusyError(error))
      throw new StorageLocked(
        `${location} is owned by another open storage (another process, or this one); close it first`,
        { holder: location, cause: error },
      );
    if (isNotDatabaseError(error))
      throw new StorageCorrupted(
        `${location} is not a readable SQLite database (${error instanceof Error ? error.message : String(error)})`,
        { file: location },
        { cause: error },
      );
    throw typedDriverError(error, location, "opening");
  }
}

/**
 * Reads the file's schema inside `BEGIN EXCLUSIVE … ROLLBACK`: with
 * exclusive locking the file's exclusive lock is taken there and kept, so
 * no other connection (another process, or a second open in this one)
 * can change the file between this decision and the switch to WAL, and a
 * second open racing this one is refused at once. The transaction only
 * reads and is rolled back, not committed: on an empty file SQLite
 * prepares a first page in memory as a write transaction begins, and a
 * commit would write it. A file open will not take
 * over throws here (`schemaReads`, `refuseNewer`); the returned version (0
 * for an empty file) is the one the migration starts from, and decides
 * whether a skipped open check runs anyway: a migration seals the rows it
 * finds with checksums and links, so it must see all of them.
 */
async function decideOwnership(db: SqliteDatabase, location: string): Promise<number> {
  await db.exec("BEGIN EXCLUSIVE");
  let version: number;
  try {
    const reads = schemaReads(location);
    let step = reads.next();
    while (step.done !== true) step = reads.next(await db.all<Record<string, unknown>>(step.value));
    version = step.value;
    refuseNewer(version, location);
  } catch (error) {
    await db.exec("ROLLBACK").catch(() => undefined);
    throw error;
  }
  await db.exec("ROLLBACK");
  return version;
}

/**
 * Sets a mode pragma and checks the mode SQLite reports back. SQLite
 * answers a mode it could not enter with the mode it kept, without an
 * error: a file whose switch to WAL failed would otherwise run every
 * commit in rollback-journal mode. The pragma runs through `all`, which
 * steps the statement to its end: the switch to WAL writes the file header
 * after the answer row, and better-sqlite3's `get` stops at the first row
 * and drops the error of that write.
 */
async function setMode(
  db: SqliteDatabase,
  location: string,
  pragma: "locking_mode" | "journal_mode",
  asked: string,
  accepted: readonly string[],
): Promise<void> {
  const action =
    pragma === "journal_mode"
      ? "switching the file to its write-ahead log"
      : "taking the file's exclusive lock";
  let rows: Record<string, unknown>[];
  try {
    rows = await db.all<Record<string, unknown>>(`PRAGMA ${pragma} = ${asked}`);
  } catch (error) {
    // A busy or not-a-database error is told apart by the caller.
    throw isIoError(error) ? typedDriverError(error, location, action) : error;
  }
  const got = rows[0]?.[pragma];
  if (typeof got === "string" && accepted.includes(got.toLowerCase())) return;
  throw new StorageIOError(
    `${location}: failed ${action}: SQLite answered ${pragma} ${JSON.stringify(got ?? null)} where ${JSON.stringify(accepted[0])} was asked`,
    { file: location },
  );
}

function readCounters(db: SqliteStatements, rows: RowReader): Counters {
  const file = rows.file;
  const seq = readTipRow(db, rows, 0, "seq");
  if (seq === undefined || !Number.isSafeInteger(seq.newest) || seq.newest < 1)
    throw new StorageCorrupted(
      `${file}: table tips has no valid seq counter row (id 0, chain 'seq')`,
      {
        file,
        table: "tips",
        key: "0/seq",
      },
    );
  const ids = db.get<{ high_water: number; crc: number }>(
    "SELECT high_water, crc FROM ids WHERE namespace = 'global'",
  );
  if (ids === undefined || !Number.isSafeInteger(ids.high_water) || ids.high_water < 1)
    throw new StorageCorrupted(`${file}: table ids has no valid 'global' high_water row`, {
      file,
      table: "ids",
    });
  rows.counter("ids", "global", ids.high_water, ids.crc);
  return { nextSeq: seq.newest, persistedHighWater: ids.high_water, highWater: ids.high_water };
}

/**
 * Copies the write-ahead log into the database and truncates it, so close
 * leaves one file. SQLite's own close checkpoints too but ignores a failure
 * (the log is simply kept); this one reports it. Returns the typed error,
 * or `undefined` when the log was emptied.
 */
export async function finalCheckpoint(
  db: SqliteDatabase,
  location: string,
): Promise<Error | undefined> {
  const action =
    "checkpointing the write-ahead log at close (nothing acknowledged is lost: the commits stay in the log, which the next open replays)";
  try {
    const result = await db.get<{ busy: number }>("PRAGMA wal_checkpoint(TRUNCATE)");
    if (result !== undefined && result.busy !== 0)
      return new StorageIOError(
        `${location}: ${action}: the checkpoint could not complete (busy)`,
        {
          file: location,
        },
      );
    return undefined;
  } catch (error) {
    return typedDriverError(error, location, action);
  }
}
