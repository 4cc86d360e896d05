import type { FileSystem } from "./file-system.js";
import {
  generationDir,
  parseGenerationDir,
  POINTER_TEMP,
  type CurrentGeneration,
} from "./generation.js";
import { MAIN_FILE, parseSidecarName } from "./line-format.js";
import { SetAside } from "./set-aside.js";
import { SNAPSHOT_FILE } from "./snapshot-format.js";

/** What removing other generations did. */
export interface GenerationCleanup {
  /** Files removed (paths relative to the storage directory). */
  removed: string[];
  /** Files found where a generation's own files belong but that a generation never holds, moved into `recovered/`. */
  setAside: { file: string; savedAs: string; reason: string }[];
  /** Removals that failed: retried by the next open or compaction. */
  deferred: { file: string; error: string }[];
}

/** A name a generation's writer creates: its files are copies or superseded, never the only evidence. */
function isGenerationFile(name: string, layout: "top" | "directory"): boolean {
  if (name === MAIN_FILE) return true;
  if (layout === "directory" && name === SNAPSHOT_FILE) return true;
  const sidecar = parseSidecarName(name);
  return sidecar !== undefined && !sidecar.temp;
}

/**
 * Removes a generation that is not the current one: an old generation a
 * newer one superseded (its every record is in the newer one, which is
 * durable), or one a compaction abandoned before switching to it (every
 * record in it is a copy of one in the current generation). Only the files
 * a generation is made of are removed; anything else found inside (a temp
 * file, a `recovered/` folder, a file of unknown name) is moved into the
 * storage's `recovered/`. `generation` 0 is the layout of earlier versions,
 * at the top of the storage directory.
 */
export async function removeGeneration(
  fs: FileSystem,
  root: string,
  generation: number,
  aside: SetAside,
  into: GenerationCleanup,
): Promise<void> {
  const top = generation === 0;
  const dir = top ? root : `${root}/${generationDir(generation)}`;
  const prefix = top ? "" : `${generationDir(generation)}/`;
  for (const name of (await fs.list(dir)).sort()) {
    if (isGenerationFile(name, top ? "top" : "directory")) {
      try {
        await fs.remove(`${dir}/${name}`);
        into.removed.push(`${prefix}${name}`);
      } catch (error) {
        into.deferred.push({ file: `${prefix}${name}`, error: String(error) });
      }
    } else if (!top || parseSidecarName(name)?.temp === true) {
      const savedAs = await aside.moveFrom(dir, name, `${prefix}${name}`.replace(/\//g, "-"));
      into.setAside.push({
        file: `${prefix}${name}`,
        savedAs,
        reason: `left in generation ${generation}, which is no longer current`,
      });
    }
  }
  if (!top && fs.removeDirectory !== undefined)
    try {
      await fs.removeDirectory(dir);
    } catch (error) {
      into.deferred.push({ file: prefix, error: String(error) });
    }
}

/**
 * On open, once the current generation has opened: removes every other
 * generation (see `removeGeneration`) and a pointer temp file a switch left
 * behind (the pointer it held never became current). Faults are deferred:
 * housekeeping never fails open.
 */
export async function removeOtherGenerations(
  fs: FileSystem,
  root: string,
  names: readonly string[],
  current: CurrentGeneration,
  fsync: boolean,
): Promise<GenerationCleanup> {
  const into: GenerationCleanup = { removed: [], setAside: [], deferred: [] };
  const aside = new SetAside(fs, root, fsync);
  const others = names
    .map((name) => parseGenerationDir(name))
    .filter((g): g is number => g !== undefined && g !== current.generation);
  // Files of the layout of earlier versions left at the top: a superseded generation 0.
  const top = names.some((name) => name === MAIN_FILE || parseSidecarName(name) !== undefined);
  if (current.generation > 0 && top) others.unshift(0);
  for (const generation of others)
    try {
      await removeGeneration(fs, root, generation, aside, into);
    } catch (error) {
      into.deferred.push({
        file: generation === 0 ? MAIN_FILE : generationDir(generation),
        error: String(error),
      });
    }
  if (names.includes(POINTER_TEMP))
    try {
      await fs.remove(`${root}/${POINTER_TEMP}`);
      into.removed.push(POINTER_TEMP);
    } catch (error) {
      into.deferred.push({ file: POINTER_TEMP, error: String(error) });
    }
  if (into.removed.length > 0) await fs.flush(root).catch(() => undefined);
  return into;
}
