import { StorageCorrupted } from "@durably/core";
import type { DirectoryFiles } from "./directory-files.js";
import { currentRepair } from "./level-current.js";
import { checkLog, joinFragments } from "./leveldb/log.js";
import { replayManifest } from "./leveldb/manifest.js";
import { join, type DirEnt } from "./node-fs.js";

/**
 * A LevelDB directory without `CURRENT`: a database whose creation failed
 * part way, or one that lost `CURRENT`.
 *
 * LevelDB creates a database by writing `MANIFEST-000001` (one version edit:
 * no table, log number 0, next file 2, last sequence 0), then `CURRENT`
 * through a temporary file `000001.dbtmp` renamed into place. A fault in that
 * second step (a failed write, fsync or rename) leaves `MANIFEST-000001`
 * without `CURRENT`. No log exists yet (LevelDB creates the first one only
 * after `CURRENT`), so no write, and no Durably key, was ever made: such a
 * directory provably never held data, and is opened as a new store (LevelDB
 * rewrites both files).
 *
 * The proof is strict: besides LevelDB's lock and info logs, only
 * `MANIFEST-000001` holding at most that one edit (or a torn part of it)
 * and `000001.dbtmp` holding a prefix of `MANIFEST-000001\n`. Anything else
 * (a table, a log, another MANIFEST, an edit recording a file or a write, a
 * damaged record, a folder, a foreign file) may be data, and the directory
 * is refused with `StorageCorrupted` saying what was found.
 */

/** LevelDB's own files that hold no data: present after a failed or fresh open. */
const SCAFFOLD = new Set(["LOCK", "LOG", "LOG.old"]);

const FIRST_MANIFEST = "MANIFEST-000001";
const FIRST_TEMP = "000001.dbtmp";

/**
 * Whether a directory without `CURRENT` can be opened as a new database:
 * `true` when it holds nothing, or only what a failed creation leaves.
 * Otherwise throws `StorageCorrupted` naming what it found.
 */
export function openableWithoutCurrent(files: DirectoryFiles, entries: readonly DirEnt[]): true {
  const data = entries.filter((e) => !SCAFFOLD.has(e.name));
  if (data.length === 0) return true;
  const doubt = data.map((e) => leftByFailedCreation(files, e)).find((d) => d !== undefined);
  if (doubt === undefined) return true;
  const names = data.map((e) => e.name).sort();
  const shown = names.slice(0, 6).join(", ") + (names.length > 6 ? ", …" : "");
  throw new StorageCorrupted(
    `${files.location}: the directory holds ${names.length} file(s) (${shown}) but no CURRENT file, ` +
      `so it is not a LevelDB database or has lost the file naming its current MANIFEST, ` +
      `and it is not what a failed creation of a database leaves either (${doubt}). ` +
      `Opening it would make LevelDB start an empty database and delete the table and log files; ` +
      `nothing was opened or changed. ${currentRepair(names)} If the directory is not a LevelDB database, move it aside.`,
    { file: join(files.location, "CURRENT") },
  );
}

/** `undefined` when `entry` is something a failed creation leaves and holds nothing; else why not. */
function leftByFailedCreation(files: DirectoryFiles, entry: DirEnt): string | undefined {
  if (entry.name !== FIRST_MANIFEST && entry.name !== FIRST_TEMP)
    return `${entry.name} is not a file LevelDB writes before CURRENT`;
  if (!entry.isFile()) return `${entry.name} is not a regular file`;
  const bytes = files.read(entry.name, entry.name === FIRST_TEMP ? "temporary file" : "MANIFEST");
  if (bytes === undefined)
    return `${entry.name} disappeared while the directory was read (another process may be creating the database here: open again)`;
  if (entry.name === FIRST_TEMP) {
    const expected = `${FIRST_MANIFEST}\n`;
    const text = new TextDecoder().decode(bytes);
    return expected.startsWith(text)
      ? undefined
      : `${FIRST_TEMP} holds ${JSON.stringify(text.slice(0, 40))}, not the start of ${JSON.stringify(expected)}`;
  }
  const read = checkLog(bytes, true);
  if (read.damage !== undefined)
    return `${FIRST_MANIFEST} has a damaged record at byte ${read.damage.offset} (${read.damage.reason})`;
  let state;
  try {
    state = replayManifest(read.contents.map(joinFragments));
  } catch (error) {
    return `${FIRST_MANIFEST} holds an edit that cannot be read (${(error as Error).message})`;
  }
  if (state.tables.size > 0) return `${FIRST_MANIFEST} records ${state.tables.size} table file(s)`;
  if (state.lastSequence > 0)
    return `${FIRST_MANIFEST} records writes up to sequence ${state.lastSequence}`;
  if (state.logNumber > 0 || state.prevLogNumber > 0 || state.nextFile > 2)
    return `${FIRST_MANIFEST} records files numbered above 1 (log ${state.logNumber}, next file ${state.nextFile})`;
  if (read.records > 1) return `${FIRST_MANIFEST} holds ${read.records} version edits, not one`;
  return undefined;
}
