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

/**
 * The live write-ahead logs, oldest first, checked: a damaged record, or a
 * torn log followed by a newer one, is a hole LevelDB would replay around
 * (`StorageCorrupted`, nothing changed).
 */
export function checkLiveLogs(
  files: DirectoryFiles,
  entries: readonly DirEnt[],
  manifest: ManifestState,
): LiveLog[] {
  const live = (name: string) => {
    const number = logNumber(name);
    return number >= manifest.logNumber || number === manifest.prevLogNumber;
  };
  const names = entries
    .filter((e) => e.isFile() && LOG_FILE.test(e.name) && live(e.name))
    .map((e) => e.name)
    .sort(byNumber);
  const logs: LiveLog[] = [];
  let torn: { file: string; offset: number } | undefined;
  for (const name of names) {
    const file = files.path(name);
    const bytes = files.readTransient(name, "write-ahead log");
    if (bytes === undefined) continue;
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
