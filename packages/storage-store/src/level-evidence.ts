import { ioError } from "./level-errors.js";
import type { LiveLog } from "./level-logs.js";
import { errno, join, type SyncFs } from "./node-fs.js";

/**
 * Copies of the write-ahead logs, kept aside before LevelDB opens the
 * database. LevelDB replays its logs at open and then deletes them; when it
 * fails to open one, it goes on without it (an I/O error it ignores, since
 * classic-level leaves `paranoid_checks` off) and deletes it all the same.
 * The copy is what lets the open notice the loss without losing the
 * evidence, and the next open put the commits back.
 *
 * A copy is a hard link (no bytes copied), or a byte copy where the file
 * system has no hard links. Copies are removed only after an open verified
 * that the store holds every commit they hold.
 */

/** The folder, inside the database directory, where copies are kept. LevelDB ignores names it does not know. */
export const KEPT_FOLDER = "durably-recovery";

/** Errors of `link` that mean "no hard links here", not "I/O failed": copy the bytes instead. */
const NO_LINKS = new Set(["EPERM", "EXDEV", "ENOTSUP", "EOPNOTSUPP", "EMLINK", "ENOSYS"]);

/**
 * Keeps a copy of every live log that holds writes, under `KEPT_FOLDER`.
 * A copy already there (kept by an earlier open whose database did not
 * open) is left as it is: LevelDB never appends to a log it replayed. A
 * copy that cannot be made is `StorageIOError` and the database is not
 * opened: without it a skipped log could not be noticed safely. Returns
 * the copies it made.
 */
export function keepLogs(fs: SyncFs, location: string, logs: readonly LiveLog[]): LiveLog[] {
  const worth = logs.filter((log) => log.records > 0);
  const made: LiveLog[] = [];
  if (worth.length === 0) return made;
  const folder = join(location, KEPT_FOLDER);
  try {
    fs.mkdirSync(folder);
  } catch (error) {
    if (errno(error) !== "EEXIST")
      throw ioError(
        `${folder}: cannot create the folder for copies of the write-ahead logs, which the open keeps until it has verified what LevelDB replayed: ${(error as Error).message}. Nothing was opened.`,
        error,
        { file: folder },
      );
  }
  for (const log of worth) {
    const copy = join(folder, log.name);
    try {
      link(fs, log.file, copy);
      made.push(log);
    } catch (error) {
      if (errno(error) === "EEXIST") continue;
      throw ioError(
        `${copy}: cannot keep a copy of the write-ahead log ${log.file} before LevelDB replays it: ${(error as Error).message}. Nothing was opened.`,
        error,
        { file: log.file },
      );
    }
  }
  return made;
}

/**
 * After LevelDB failed to open (another owner's lock, an I/O error): the
 * logs were not replayed, so a copy made for this open that is still a
 * hard link to its live log is only a second name for it, and is removed.
 * Anything else stays for the next open.
 */
export function dropUnusedCopies(fs: SyncFs, location: string, made: readonly LiveLog[]): void {
  const folder = join(location, KEPT_FOLDER);
  for (const log of made) {
    const copy = join(folder, log.name);
    try {
      const a = fs.statSync(copy);
      const b = fs.statSync(log.file);
      if (a.ino === b.ino && a.dev === b.dev) fs.unlinkSync(copy);
    } catch {
      // Left for the next open.
    }
  }
  try {
    fs.rmdirSync(folder);
  } catch {
    // Not empty, or gone.
  }
}

function link(fs: SyncFs, from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch (error) {
    if (!NO_LINKS.has(errno(error) ?? "")) throw error;
    fs.copyFileSync(from, to);
  }
}

/**
 * Removes the kept copies named, then the folder when nothing else is in
 * it: called once an open has verified that the store holds every commit
 * they hold. A copy that cannot be removed stays; a later open removes it.
 */
export function releaseKept(fs: SyncFs, location: string, names: readonly string[]): void {
  const folder = join(location, KEPT_FOLDER);
  for (const name of names) {
    try {
      fs.unlinkSync(join(folder, name));
    } catch {
      // Left for a later open; it holds nothing the store lacks.
    }
  }
  try {
    fs.rmdirSync(folder);
  } catch {
    // Not empty (a copy that could not be removed, or someone's file), or already gone.
  }
}
