import type { DirectoryFiles } from "./directory-files.js";
import { manifestNumber, manifestsIn, type Current } from "./level-current.js";
import type { ManifestState } from "./leveldb/manifest.js";
import { ioError } from "./level-errors.js";
import { errno } from "./node-fs.js";

/**
 * Signs that LevelDB started a new, empty database over an earlier one in
 * this directory: what an open with `createIfMissing` does when `CURRENT` is
 * gone. It writes `MANIFEST-000001`, then `MANIFEST-000002` (the current one
 * from then on), replays whatever logs it finds, and deletes every table file
 * and log it does not know: the earlier database's data. It leaves behind:
 *
 * - the earlier database's MANIFEST, when its number is above 2: LevelDB
 *   keeps MANIFEST files numbered above its own. A healthy directory holds no
 *   MANIFEST above the current one, except the one LevelDB's next open will
 *   write (numbered the current MANIFEST's next file number: left by an open
 *   that crashed before switching `CURRENT`, and rewritten by the next).
 * - its info log `LOG` for that open (`LOG.old` after one more attempt to
 *   open): "Delete type=3 #1" (MANIFEST-000001, which only the creation of a
 *   database writes) in the same run of deletions as "Delete type=2 #N"
 *   (table files), after "Recovering log #N" (logs it found). A new database
 *   in an empty directory finds no log and deletes no table. The info log is
 *   only read while the current MANIFEST is MANIFEST-000002, i.e. while the
 *   newest successful open is the one that created the database.
 *
 * Each found sign is one sentence naming the file it is in.
 */

export interface ResetSign {
  /** The file holding the sign. */
  file: string;
  says: string;
}

/** How much of the info log is read: an open's own lines come first. */
const INFO_LOG_HEAD = 64 * 1024;

export function resetSigns(
  files: DirectoryFiles,
  names: readonly string[],
  current: Current,
  state: ManifestState,
): ResetSign[] {
  const signs: ResetSign[] = [];
  for (const name of manifestsIn(names)) {
    const number = manifestNumber(name);
    if (number <= current.number || number === state.nextFile) continue;
    signs.push({
      file: files.path(name),
      says:
        `${name} is numbered above the current ${current.manifest}: it belongs to an earlier database in this directory ` +
        `(a database that lived here would have written every later MANIFEST above it)`,
    });
  }
  if (current.number === 2) {
    const creation = creatingOpen(files, names);
    if (creation !== undefined) signs.push(creation);
  }
  return signs;
}

/** The info log's account of an open that created the database over earlier files, if it is one. */
function creatingOpen(files: DirectoryFiles, names: readonly string[]): ResetSign | undefined {
  for (const log of ["LOG", "LOG.old"]) {
    if (!names.includes(log)) continue;
    const text = head(files, log);
    if (text === undefined) continue;
    const open = firstOpen(text);
    // An info log without deletions is a failed attempt's: the open before it wrote LOG.old.
    if (open === undefined) continue;
    if (!open.created) return undefined;
    const found: string[] = [];
    if (open.tables.length > 0)
      found.push(`deleted table file(s) ${open.tables.map((n) => `#${n}`).join(", ")}`);
    if (open.logs.length > 0)
      found.push(`replayed write-ahead log(s) ${open.logs.map((n) => `#${n}`).join(", ")}`);
    if (found.length === 0) return undefined;
    return {
      file: files.path(log),
      says:
        `LevelDB's info log ${log} shows that the open which created the current database ` +
        `${found.join(" and ")} left by an earlier database`,
    };
  }
  return undefined;
}

/** The first run of deletions in an info log (an open's own clean-up), and the logs replayed before it. */
function firstOpen(
  text: string,
): { created: boolean; tables: number[]; logs: number[] } | undefined {
  const logs: number[] = [];
  const tables: number[] = [];
  let created = false;
  let inRun = false;
  for (const line of text.split("\n")) {
    const deleted = /Delete type=(\d+) #(\d+)/.exec(line);
    if (deleted === null) {
      if (inRun) break;
      const replayed = /Recovering log #(\d+)/.exec(line);
      if (replayed !== null) logs.push(Number(replayed[1]));
      continue;
    }
    inRun = true;
    const [type, number] = [Number(deleted[1]), Number(deleted[2])];
    if (type === 3 && number === 1) created = true;
    if (type === 2) tables.push(number);
  }
  return inRun ? { created, tables, logs } : undefined;
}

/**
 * The first bytes of an info log; `undefined` when it is gone. One that
 * cannot be read is `StorageIOError`: the check cannot run.
 */
function head(files: DirectoryFiles, name: string): string | undefined {
  const { fs } = files;
  const path = files.path(name);
  const failed = (error: unknown) =>
    ioError(`${path}: cannot read LevelDB's info log: ${(error as Error).message}`, error, {
      file: path,
    });
  let fd: number;
  try {
    fd = fs.openSync(path, "r");
  } catch (error) {
    if (errno(error) === "ENOENT") return undefined;
    throw failed(error);
  }
  try {
    const buffer = new Uint8Array(INFO_LOG_HEAD);
    const n = fs.readSync(fd, buffer, 0, buffer.length, 0);
    return new TextDecoder().decode(buffer.subarray(0, n));
  } catch (error) {
    throw failed(error);
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // A read-only descriptor: nothing was written that a failed close could lose.
    }
  }
}
