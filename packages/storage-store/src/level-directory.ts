import { StorageCorrupted } from "@durably/core";
import { DirectoryFiles } from "./directory-files.js";
import { KEPT_FOLDER } from "./level-evidence.js";
import { ioError } from "./level-errors.js";
import { checkLiveLogs, readKeptLogs, type KeptLog, type LiveLog } from "./level-logs.js";
import { readCurrent, readManifest } from "./level-current.js";
import { resetSigns, type ResetSign } from "./level-reset.js";
import { openableWithoutCurrent } from "./level-unborn.js";
import type { ManifestState } from "./leveldb/manifest.js";
import { checkTable } from "./leveldb/table.js";
import { errno, nodeFs, type DirEnt } from "./node-fs.js";

/**
 * Looks at a LevelDB directory before LevelDB opens it, synchronously, at a
 * moment no LevelDB open of this database runs (see `level-open`).
 *
 * - No directory, only LevelDB's lock and info-log files, or only what a
 *   failed creation leaves (`level-unborn`): a new database, opened with
 *   `createIfMissing`.
 * - Other files but no `CURRENT`: refused with `StorageCorrupted`. LevelDB
 *   would create a new database there and delete the table and log files it
 *   does not know.
 * - `CURRENT` present: it must name a MANIFEST the directory holds
 *   (`level-current`), and no sign may show that an earlier open already
 *   started a new database over an earlier one (`level-reset`). Then an
 *   existing database, opened without `createIfMissing`, after its files pass
 *   the checks LevelDB skips: the MANIFEST and the live write-ahead logs read
 *   without a damaged record (`checkLog`), and every live table file of the
 *   size the MANIFEST records, with every block's checksum right
 *   (`checkTable`, unless `checkTables` is false). A missing table file is
 *   left to LevelDB, which refuses to open without it. A missing live log is
 *   refused here (`checkLiveLogs`): LevelDB would open without it. A file a
 *   live owner in another process deleted meanwhile is passed by (the open
 *   then reports `StorageLocked`).
 *
 * It also returns what the open needs next: the live logs with the newest
 * commit each holds, and the copies of logs an earlier open kept aside
 * (`level-evidence`), which `verifyReplay` checks the opened database
 * against.
 *
 * Runs only where `process.getBuiltinModule` gives `node:fs` (Node 20.16+,
 * 22.3+); elsewhere it returns `undefined` and the database opens as its own
 * options say.
 */

/** What the directory holds, for the open: the live logs and the copies of logs kept by an earlier open. */
export interface LevelDirectory {
  create: boolean;
  /** The live write-ahead logs, oldest first (none for a new database). */
  live: LiveLog[];
  /** Copies of logs an earlier open kept aside (`KEPT_FOLDER`), oldest first. */
  kept: KeptLog[];
}

/** Whether to create the database, and its logs; `undefined` when the file system cannot be read from here. */
export function inspectLevelDirectory(
  location: string,
  options: { checkTables: boolean },
): LevelDirectory | undefined {
  const fs = nodeFs();
  if (fs === undefined) return undefined;
  let entries: DirEnt[];
  try {
    entries = fs.readdirSync(location, { withFileTypes: true });
  } catch (error) {
    if (errno(error) === "ENOENT") return { create: true, live: [], kept: [] };
    // Not a directory, or unreadable: LevelDB opens nothing there either; let it say why.
    if (errno(error) === "ENOTDIR") return { create: false, live: [], kept: [] };
    throw ioError(`${location}: cannot list the directory: ${(error as Error).message}`, error, {
      file: location,
    });
  }
  const names = entries.map((e) => e.name);
  const files = new DirectoryFiles(fs, location);
  if (!names.includes("CURRENT")) {
    openableWithoutCurrent(files, entries);
    return { create: true, live: [], kept: [] };
  }
  const current = readCurrent(files, names);
  const manifest = current === undefined ? undefined : readManifest(files, current);
  // CURRENT or its MANIFEST went away since the listing: a live owner, whose lock LevelDB reports.
  if (current === undefined || manifest === undefined) return { create: false, live: [], kept: [] };
  const signs = resetSigns(files, names, current, manifest);
  if (signs.length > 0) throw resetFound(location, signs);
  if (options.checkTables) checkTables(files, names, manifest);
  const live = checkLiveLogs(files, entries, manifest, {
    manifestFile: files.path(current.manifest),
    stillLive: (number) => {
      // Read again: a live owner moves the log number on (in the same MANIFEST, or a new one) before it deletes a log.
      const again = readCurrent(files, names);
      if (again === undefined || again.manifest !== current.manifest) return false;
      const state = readManifest(files, again);
      return state !== undefined && (number >= state.logNumber || number === state.prevLogNumber);
    },
  });
  const kept = names.includes(KEPT_FOLDER) ? readKeptLogs(files, KEPT_FOLDER) : [];
  return { create: false, live, kept };
}

/** Signs of an earlier reset found before LevelDB opens: refused, nothing touched. */
function resetFound(location: string, signs: readonly ResetSign[]): StorageCorrupted {
  return new StorageCorrupted(
    `${location}: an earlier open started a new, empty database over an earlier one in this directory ` +
      `(LevelDB opened with createIfMissing after CURRENT was lost, deleting the earlier database's table and log files): ` +
      `${signs.map((s) => s.says).join("; ")}. The database there now may lack any of the earlier commits. ` +
      `Nothing was opened or changed: restore the directory from a backup. To use the new database as it is, ` +
      `move ${signs.map((s) => s.file).join(" and ")} out of the directory.`,
    { file: (signs[0] as ResetSign).file },
  );
}

/** Every live table: present, of its recorded size, every block's checksum right. */
function checkTables(
  files: DirectoryFiles,
  names: readonly string[],
  manifest: ManifestState,
): void {
  const present = new Set(names);
  for (const [number, size] of [...manifest.tables].sort((a, b) => a[0] - b[0])) {
    const base = String(number).padStart(6, "0");
    const name = [`${base}.ldb`, `${base}.sst`].find((n) => present.has(n));
    // A missing table: LevelDB refuses to open without it (and names it) before it replays anything.
    if (name === undefined) continue;
    const file = files.path(name);
    const bytes = files.readTransient(name, "table file");
    if (bytes === undefined) continue;
    const problem =
      bytes.length !== size
        ? `${bytes.length} bytes, but the MANIFEST records ${size}`
        : checkTable(bytes);
    if (problem !== undefined)
      throw new StorageCorrupted(
        `${file}: the table file is damaged (${problem}). LevelDB reads tables without checking them and could skip or misread keys. ` +
          `Nothing was opened or changed: keep the directory as evidence and restore from a backup.`,
        { file },
      );
  }
}
