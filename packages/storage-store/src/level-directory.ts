import { StorageCorrupted } from "@durably/core";
import { DirectoryFiles } from "./directory-files.js";
import { KEPT_FOLDER } from "./level-evidence.js";
import { ioError } from "./level-errors.js";
import { checkLiveLogs, readKeptLogs, type KeptLog, type LiveLog } from "./level-logs.js";
import { checkLog, joinFragments } from "./leveldb/log.js";
import { replayManifest, type ManifestState } from "./leveldb/manifest.js";
import { checkTable } from "./leveldb/table.js";
import { errno, join, nodeFs, type DirEnt } from "./node-fs.js";

/**
 * Looks at a LevelDB directory before LevelDB opens it, synchronously, so
 * the check runs before the database's own deferred open could start.
 *
 * - No directory, or only LevelDB's lock and info-log files in it: a new
 *   database, opened with `createIfMissing`.
 * - `CURRENT` present: an existing database, opened without
 *   `createIfMissing`, after its files pass the checks LevelDB skips: the
 *   MANIFEST and the live write-ahead logs read without a damaged record
 *   (`checkLog`), and every live table file of the size the MANIFEST
 *   records, with every block's checksum right (`checkTable`, unless
 *   `checkTables` is false). A file that is missing is left to LevelDB,
 *   which refuses to open without it, or deleted it itself while another
 *   process owns the database (then the open reports `StorageLocked`).
 * - Anything else (files but no `CURRENT`): refused with `StorageCorrupted`.
 *   LevelDB would create a new database there and delete the table and log
 *   files it does not know.
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

/** LevelDB's own files that hold no data: present after a failed or fresh open. */
const SCAFFOLD = new Set(["LOCK", "LOG", "LOG.old"]);

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
  if (!names.includes("CURRENT")) {
    const data = names.filter((name) => !SCAFFOLD.has(name)).sort();
    if (data.length === 0) return { create: true, live: [], kept: [] };
    const shown = data.slice(0, 6).join(", ") + (data.length > 6 ? ", …" : "");
    throw new StorageCorrupted(
      `${location}: the directory holds ${data.length} file(s) (${shown}) but no CURRENT file, ` +
        `so it is not a LevelDB database or has lost the file naming its current MANIFEST. ` +
        `Opening it would make LevelDB start an empty database and delete the table and log files; ` +
        `nothing was opened or changed. Restore CURRENT (one line: the newest MANIFEST-NNNNNN file name) or move the directory aside.`,
      { file: join(location, "CURRENT") },
    );
  }
  const files = new DirectoryFiles(fs, location);
  const manifest = readManifest(files);
  // Without a readable MANIFEST LevelDB refuses to open by itself (and says why).
  if (manifest === undefined) return { create: false, live: [], kept: [] };
  if (options.checkTables) checkTables(files, names, manifest);
  const live = checkLiveLogs(files, entries, manifest);
  const kept = names.includes(KEPT_FOLDER) ? readKeptLogs(files, KEPT_FOLDER) : [];
  return { create: false, live, kept };
}

/**
 * The state the MANIFEST named by CURRENT describes; `undefined` when CURRENT
 * does not name a MANIFEST or a file is gone (LevelDB will report it). A
 * file that cannot be read is `StorageIOError`: the checks cannot run.
 */
function readManifest(files: DirectoryFiles): ManifestState | undefined {
  const current = files.read("CURRENT", "CURRENT file");
  if (current === undefined) return undefined;
  const text = new TextDecoder().decode(current);
  const name = text.endsWith("\n") ? text.slice(0, -1) : "";
  if (!/^MANIFEST-\d+$/.test(name)) return undefined;
  const bytes = files.read(name, "MANIFEST");
  if (bytes === undefined) return undefined;
  const file = files.path(name);
  const read = checkLog(bytes, true);
  if (read.damage !== undefined)
    throw new StorageCorrupted(
      `${file}: record at byte ${read.damage.offset} is damaged (${read.damage.reason}); nothing was opened or changed`,
      { file },
    );
  try {
    return replayManifest(read.contents.map(joinFragments));
  } catch (error) {
    throw new StorageCorrupted(
      `${file}: ${(error as Error).message}; nothing was opened or changed`,
      { file },
      { cause: error },
    );
  }
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
