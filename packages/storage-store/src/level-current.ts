import { StorageCorrupted } from "@durably/core";
import type { DirectoryFiles } from "./directory-files.js";
import { checkLog, joinFragments } from "./leveldb/log.js";
import { replayManifest, type ManifestState } from "./leveldb/manifest.js";

/**
 * `CURRENT` and the MANIFEST it names, read before LevelDB opens a
 * directory. `CURRENT` holds one line, the file name of the current MANIFEST
 * and a newline; LevelDB reads it without checking the name, so a damaged
 * `CURRENT` would make it fail on a file that does not exist, reported as an
 * I/O error. Checked here, it is `StorageCorrupted` naming `CURRENT`.
 */

export const MANIFEST_FILE = /^MANIFEST-(\d+)$/;

/** What `CURRENT` names. */
export interface Current {
  /** The MANIFEST's file name (`MANIFEST-000004`). */
  manifest: string;
  number: number;
}

/** The MANIFEST files in `names`, newest (highest number) first. */
export function manifestsIn(names: readonly string[]): string[] {
  return names
    .filter((name) => MANIFEST_FILE.test(name))
    .sort((a, b) => manifestNumber(b) - manifestNumber(a));
}

export function manifestNumber(name: string): number {
  return Number(MANIFEST_FILE.exec(name)?.[1]);
}

/** How to put `CURRENT` right, from the MANIFEST files the directory holds. */
export function currentRepair(names: readonly string[]): string {
  const [newest] = manifestsIn(names);
  if (newest === undefined)
    return "The directory holds no MANIFEST file, so CURRENT cannot be repaired from it: restore the directory from a backup.";
  return (
    `The newest MANIFEST in the directory is ${newest}: if it is the current one, write its name and a newline into CURRENT ` +
    `(printf '${newest}\\n' > CURRENT) and open again; the checks then verify the files it lists. Otherwise restore the directory from a backup.`
  );
}

function shown(bytes: Uint8Array): string {
  const text = new TextDecoder().decode(bytes.subarray(0, 48));
  return `${bytes.length} byte(s): ${JSON.stringify(text)}${bytes.length > 48 ? "…" : ""}`;
}

/**
 * What `CURRENT` names, checked: one line `MANIFEST-<number>` and a newline,
 * naming a file the directory holds. `undefined` when `CURRENT` is gone, or
 * names a MANIFEST that is gone while `CURRENT` itself changed meanwhile (a
 * live owner moved to a new MANIFEST; LevelDB's lock will refuse the open).
 * Anything else is `StorageCorrupted` naming `CURRENT`, nothing changed.
 */
export function readCurrent(files: DirectoryFiles, names: readonly string[]): Current | undefined {
  const file = files.path("CURRENT");
  const bytes = files.read("CURRENT", "CURRENT file");
  if (bytes === undefined) return undefined;
  const text = new TextDecoder().decode(bytes);
  const match = /^(MANIFEST-(\d+))\n$/.exec(text);
  if (match === null)
    throw new StorageCorrupted(
      `${file}: CURRENT should hold the name of the current MANIFEST and a newline (like "MANIFEST-000004\\n"), but holds ${shown(bytes)}. ` +
        `LevelDB would fail to open the database. Nothing was opened or changed. ${currentRepair(names)}`,
      { file },
    );
  const current: Current = { manifest: match[1] as string, number: Number(match[2]) };
  if (names.includes(current.manifest)) return current;
  // Named but not listed: gone since the listing (a live owner), or never there (damage).
  const again = files.read("CURRENT", "CURRENT file");
  if (again === undefined || new TextDecoder().decode(again) !== text) return undefined;
  if (files.read(current.manifest, "MANIFEST") !== undefined) return current;
  throw new StorageCorrupted(
    `${file}: CURRENT names ${current.manifest}, which is not in the directory` +
      `${manifestsIn(names).length > 0 ? ` (it holds ${manifestsIn(names).join(", ")})` : ""}. ` +
      `LevelDB would fail to open the database. Nothing was opened or changed. ${currentRepair(names)}`,
    { file },
  );
}

/**
 * The state the MANIFEST `current` names describes; `undefined` when the
 * file is gone (a live owner replaced it; LevelDB will report the lock). A
 * damaged record or edit is `StorageCorrupted` naming the MANIFEST; a file
 * that cannot be read is `StorageIOError`: the checks cannot run.
 */
export function readManifest(files: DirectoryFiles, current: Current): ManifestState | undefined {
  const bytes = files.read(current.manifest, "MANIFEST");
  if (bytes === undefined) return undefined;
  const file = files.path(current.manifest);
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
