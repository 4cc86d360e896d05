import { StorageCorrupted } from "@durably/core";
import type { DirectoryFiles } from "./directory-files.js";
import { newestCounters, readLogWrite, type LogWrite } from "./log-commits.js";
import { checkLog, joinFragments } from "./leveldb/log.js";
import type { ManifestState } from "./leveldb/manifest.js";
import { ioError } from "./level-errors.js";
import { errno, type DirEnt } from "./node-fs.js";

/**
 * The write-ahead logs LevelDB replays when it opens: checked record by
 * record before it does (a damaged record is a hole LevelDB would replay
 * around), and read for the newest Durably commit they hold, which the
 * opened database must then serve (LevelDB skips a log it fails to open).
 */

export const LOG_FILE = /^(\d+)\.log$/;

/** Where a log's commits end: the counters of its newest commit call. */
export interface CommitPoint {
  seq: number;
  link: string;
}

export interface LiveLog {
  name: string;
  file: string;
  /** Complete records (writes) in the log. */
  records: number;
  /** The counters of the newest commit call in the log, if it holds one. */
  newest?: CommitPoint;
}

export function logNumber(name: string): number {
  return Number(LOG_FILE.exec(name)?.[1]);
}

export function byNumber(a: string, b: string): number {
  return logNumber(a) - logNumber(b);
}

/** The newest commit point of a log's writes. */
function newestOf(writes: Iterable<LogWrite>): CommitPoint | undefined {
  let newest: CommitPoint | undefined;
  for (const write of writes) if (write.counters !== undefined) newest = write.counters;
  return newest;
}

function* writesOf(contents: readonly Uint8Array[][], file: string): Generator<LogWrite> {
  for (let i = 0; i < contents.length; i++)
    yield readLogWrite(joinFragments(contents[i] as Uint8Array[]), file, i);
}

/** LevelDB's name for log `number` (`LogFileName`: six digits at least). */
export function logName(number: number): string {
  return `${String(number).padStart(6, "0")}.log`;
}

/** How `checkLiveLogs` tells a log that went missing from one a live owner retired meanwhile. */
export interface LiveLogSource {
  /** The MANIFEST file `manifest` was read from (named in the errors). */
  manifestFile: string;
  /**
   * Reads `CURRENT` and the MANIFEST again: whether log `number` is still
   * live (false when `CURRENT` or the MANIFEST changed so that it is not: a
   * live owner moved on, and LevelDB's lock will refuse the open).
   */
  stillLive(number: number): boolean;
}

/**
 * The live write-ahead logs, oldest first, checked: a damaged record, or a
 * torn log followed by a newer one, is a hole LevelDB would replay around
 * (`StorageCorrupted`, nothing changed).
 *
 * The logs the MANIFEST names (its log number, and its previous log number
 * when not 0) must be there: LevelDB creates a log before a MANIFEST edit
 * names it and deletes it only after an edit names a newer one, so a named
 * log that is absent was lost. LevelDB would open without it (as an empty or
 * older database, deleting the MANIFEST that named it), so that is
 * `StorageCorrupted` naming the log and the MANIFEST, nothing changed. A log
 * that cannot be read is `StorageIOError` naming it (`DirectoryFiles`).
 * Only a log that is gone because `CURRENT` or the MANIFEST moved on since
 * they were read (a live owner, which LevelDB's lock refuses) is passed by.
 */
export function checkLiveLogs(
  files: DirectoryFiles,
  entries: readonly DirEnt[],
  manifest: ManifestState,
  source: LiveLogSource,
): LiveLog[] {
  const live = (name: string) => {
    const number = logNumber(name);
    return number >= manifest.logNumber || number === manifest.prevLogNumber;
  };
  const listed = new Set(entries.map((e) => e.name));
  // Not filtered to regular files: a log that is a directory or a dangling link fails below, named.
  const names = entries.filter((e) => LOG_FILE.test(e.name) && live(e.name)).map((e) => e.name);
  for (const number of new Set([manifest.prevLogNumber, manifest.logNumber]))
    if (number > 0 && !listed.has(logName(number))) names.push(logName(number));
  names.sort(byNumber);
  /** A live log the directory lacks: lost, unless a live owner retired it since the MANIFEST was read. */
  const gone = (name: string): void => {
    if (files.read(name, "write-ahead log") !== undefined) return; // there after all: a live owner
    if (!source.stillLive(logNumber(name))) return; // retired by a live owner: LevelDB's lock decides
    const named =
      logNumber(name) === manifest.logNumber
        ? `names it as its live write-ahead log (log number ${manifest.logNumber})`
        : logNumber(name) === manifest.prevLogNumber
          ? `names it as its previous write-ahead log, still replayed (previous log number ${manifest.prevLogNumber})`
          : `counts it live (log numbers from ${manifest.logNumber} are replayed)`;
    throw new StorageCorrupted(
      `${files.path(name)}: the write-ahead log is missing, but ${source.manifestFile} ${named}. ` +
        `LevelDB would open without it, serving a database without the writes it held (every commit since the last table ` +
        `was written, or the whole store), and delete that MANIFEST. Nothing was opened or changed: restore ${name} ` +
        `(or the directory) from a backup.`,
      { file: files.path(name) },
    );
  };
  const logs: LiveLog[] = [];
  let torn: { file: string; offset: number } | undefined;
  for (const name of names) {
    const file = files.path(name);
    const bytes = files.readTransient(name, "write-ahead log");
    if (bytes === undefined) {
      gone(name);
      continue;
    }
    const result = checkLog(bytes, true);
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
    const log: LiveLog = { name, file, records: result.records };
    // The newest commit is in the last write that holds counters: read from the end.
    for (let i = result.contents.length - 1; i >= 0 && log.newest === undefined; i--) {
      const counters = newestCounters(joinFragments(result.contents[i] as Uint8Array[]));
      if (counters !== undefined) log.newest = counters;
    }
    logs.push(log);
  }
  return logs;
}

/** A copy of a write-ahead log kept aside before an open (see `level-evidence`), read back. */
export interface KeptLog {
  name: string;
  file: string;
  writes: LogWrite[];
  newest?: CommitPoint;
}

/** Reads the kept copies in `folder` (a name inside the database directory), oldest first. */
export function readKeptLogs(files: DirectoryFiles, folder: string): KeptLog[] {
  let names: string[];
  try {
    names = files.fs
      .readdirSync(files.path(folder), { withFileTypes: true })
      .filter((e) => e.isFile() && LOG_FILE.test(e.name))
      .map((e) => e.name)
      .sort(byNumber);
  } catch (error) {
    if (errno(error) === "ENOENT") return [];
    throw ioError(
      `${files.path(folder)}: cannot list the kept copies of write-ahead logs: ${(error as Error).message}`,
      error,
      { file: files.path(folder) },
    );
  }
  const logs: KeptLog[] = [];
  for (const name of names) {
    const path = `${folder}/${name}`;
    const file = files.path(path);
    const bytes = files.read(path, "kept copy of a write-ahead log");
    if (bytes === undefined) continue;
    const result = checkLog(bytes, true);
    if (result.damage !== undefined)
      throw new StorageCorrupted(
        `${file}: this copy of a write-ahead log, kept aside by an earlier open to restore commits LevelDB had skipped, ` +
          `is damaged at byte ${result.damage.offset} (${result.damage.reason}). Nothing was opened or changed: ` +
          `move it out of the directory to open the store without it (the commits only it holds are then lost).`,
        { file },
      );
    const writes = [...writesOf(result.contents, file)];
    const log: KeptLog = { name, file, writes };
    const newest = newestOf(writes);
    if (newest !== undefined) log.newest = newest;
    logs.push(log);
  }
  return logs;
}
