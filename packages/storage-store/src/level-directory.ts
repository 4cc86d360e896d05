import { StorageCorrupted } from "@durably/core";
import { ioError } from "./level-errors.js";
import { checkLog } from "./leveldb/log.js";
import { replayManifest, type ManifestState } from "./leveldb/manifest.js";
import { checkTable } from "./leveldb/table.js";

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
 * Runs only where `process.getBuiltinModule` gives `node:fs` (Node 20.16+,
 * 22.3+); elsewhere it returns `undefined` and the database opens as its own
 * options say.
 */

interface DirEnt {
  name: string;
  isFile(): boolean;
}

/** The few `node:fs` functions used here, declared so the package needs no Node types at runtime. */
interface SyncFs {
  readdirSync(path: string, options: { withFileTypes: true }): DirEnt[];
  readFileSync(path: string): Uint8Array;
  readFileSync(path: string, encoding: "utf8"): string;
}

function nodeFs(): SyncFs | undefined {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
    .process;
  return process?.getBuiltinModule?.("node:fs") as SyncFs | undefined;
}

/** LevelDB's own files that hold no data: present after a failed or fresh open. */
const SCAFFOLD = new Set(["LOCK", "LOG", "LOG.old"]);
const LOG_FILE = /^(\d+)\.log$/;

function errno(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

function join(location: string, name: string): string {
  return location.endsWith("/") || location.endsWith("\\")
    ? location + name
    : `${location}/${name}`;
}

/** Whether to create the database; `undefined` when the file system cannot be read from here. */
export function inspectLevelDirectory(
  location: string,
  options: { checkTables: boolean },
): { create: boolean } | undefined {
  const fs = nodeFs();
  if (fs === undefined) return undefined;
  let entries: DirEnt[];
  try {
    entries = fs.readdirSync(location, { withFileTypes: true });
  } catch (error) {
    if (errno(error) === "ENOENT") return { create: true };
    // Not a directory, or unreadable: LevelDB opens nothing there either; let it say why.
    if (errno(error) === "ENOTDIR") return { create: false };
    throw ioError(`${location}: cannot list the directory: ${(error as Error).message}`, error, {
      file: location,
    });
  }
  const names = entries.map((e) => e.name);
  if (!names.includes("CURRENT")) {
    const data = names.filter((name) => !SCAFFOLD.has(name)).sort();
    if (data.length === 0) return { create: true };
    const shown = data.slice(0, 6).join(", ") + (data.length > 6 ? ", …" : "");
    throw new StorageCorrupted(
      `${location}: the directory holds ${data.length} file(s) (${shown}) but no CURRENT file, ` +
        `so it is not a LevelDB database or has lost the file naming its current MANIFEST. ` +
        `Opening it would make LevelDB start an empty database and delete the table and log files; ` +
        `nothing was opened or changed. Restore CURRENT (one line: the newest MANIFEST-NNNNNN file name) or move the directory aside.`,
      { file: join(location, "CURRENT") },
    );
  }
  const files = new Files(fs, location);
  const manifest = readManifest(files);
  // Without a readable MANIFEST LevelDB refuses to open by itself (and says why).
  if (manifest === undefined) return { create: false };
  if (options.checkTables) checkTables(files, names, manifest);
  checkLogs(files, entries, manifest);
  return { create: false };
}

class Files {
  constructor(
    readonly fs: SyncFs,
    readonly location: string,
  ) {}

  path(name: string): string {
    return join(this.location, name);
  }

  /**
   * A file's bytes; `undefined` when it is gone: a live owner (which
   * LevelDB's lock will report) deleted it after a flush or compaction, or
   * it is missing and LevelDB itself refuses to open without it.
   */
  read(name: string, what: string): Uint8Array | undefined {
    try {
      return this.fs.readFileSync(this.path(name));
    } catch (error) {
      if (errno(error) === "ENOENT") return undefined;
      throw ioError(
        `${this.path(name)}: cannot read the ${what}: ${(error as Error).message}`,
        error,
        { file: this.path(name) },
      );
    }
  }
}

/** The state the MANIFEST named by CURRENT describes; `undefined` when CURRENT or the MANIFEST cannot be read (LevelDB will report it). */
function readManifest(files: Files): ManifestState | undefined {
  let current: string;
  try {
    current = files.fs.readFileSync(files.path("CURRENT"), "utf8");
  } catch {
    return undefined;
  }
  const name = current.endsWith("\n") ? current.slice(0, -1) : "";
  if (!/^MANIFEST-\d+$/.test(name)) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = files.fs.readFileSync(files.path(name));
  } catch {
    return undefined;
  }
  const file = files.path(name);
  const read = checkLog(bytes, true);
  if (read.damage !== undefined)
    throw new StorageCorrupted(
      `${file}: record at byte ${read.damage.offset} is damaged (${read.damage.reason}); nothing was opened or changed`,
      { file },
    );
  try {
    return replayManifest(read.contents);
  } catch (error) {
    throw new StorageCorrupted(
      `${file}: ${(error as Error).message}; nothing was opened or changed`,
      { file },
      { cause: error },
    );
  }
}

/** Every live table: present, of its recorded size, every block's checksum right. */
function checkTables(files: Files, names: readonly string[], manifest: ManifestState): void {
  const present = new Set(names);
  for (const [number, size] of [...manifest.tables].sort((a, b) => a[0] - b[0])) {
    const base = String(number).padStart(6, "0");
    const name = [`${base}.ldb`, `${base}.sst`].find((n) => present.has(n));
    // A missing table: LevelDB refuses to open without it (and names it) before it replays anything.
    if (name === undefined) continue;
    const file = files.path(name);
    const bytes = files.read(name, "table file");
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

/** The live write-ahead logs, oldest first: a damaged record, or a torn log followed by a newer one, is a hole LevelDB would replay around. */
function checkLogs(files: Files, entries: DirEnt[], manifest: ManifestState): void {
  const live = (name: string) => {
    const number = Number(LOG_FILE.exec(name)?.[1]);
    return number >= manifest.logNumber || number === manifest.prevLogNumber;
  };
  const logs = entries
    .filter((e) => e.isFile() && LOG_FILE.test(e.name) && live(e.name))
    .map((e) => e.name)
    .sort((a, b) => Number(LOG_FILE.exec(a)?.[1]) - Number(LOG_FILE.exec(b)?.[1]));
  let torn: { file: string; offset: number } | undefined;
  for (const name of logs) {
    const file = files.path(name);
    const bytes = files.read(name, "write-ahead log");
    if (bytes === undefined) continue;
    const result = checkLog(bytes);
    if (torn !== undefined && result.records > 0)
      throw new StorageCorrupted(
        `${torn.file}: the write-ahead log is cut off at byte ${torn.offset}, but the newer log ${name} holds ${result.records} write(s): ` +
          `LevelDB would replay those after a hole. Nothing was opened or changed.`,
        { file: torn.file },
      );
    const damage = result.damage;
    if (damage !== undefined) {
      const at = `${file}: the write-ahead log record at byte ${damage.offset} is damaged (${damage.reason})`;
      throw new StorageCorrupted(
        damage.recordsAfter > 0
          ? `${at}, and ${damage.recordsAfter} write(s) after it are intact: LevelDB would skip the damaged ones and replay the later ones, ` +
              `losing commits from the middle. Nothing was opened or changed: keep the directory as evidence and restore from a backup.`
          : `${at}; nothing after it is intact: LevelDB would drop it with the newest commits. Nothing was opened or changed. ` +
              `To accept losing those commits, open the directory once with classic-level directly (LevelDB keeps the commits before the damage), then open it with Durably again.`,
        { file },
      );
    }
    if (result.tornAt !== undefined) torn = { file, offset: result.tornAt };
  }
}
