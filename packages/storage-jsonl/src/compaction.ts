import type { FileSystem } from "./file-system.js";
import { CatchUp, moveIndex, oldExtents, type CaughtUp } from "./compaction-catch-up.js";
import { generationDir, POINTER_TEMP, preparePointer, switchPointer } from "./generation.js";
import { removeGeneration, type GenerationCleanup } from "./generation-cleanup.js";
import type { JsonlIndex } from "./jsonl-index.js";
import { MAIN_FILE } from "./line-format.js";
import { SetAside } from "./set-aside.js";
import { SNAPSHOT_FILE } from "./snapshot-format.js";
import { capture, writeGeneration } from "./snapshot-writer.js";

/** What a finished compaction did. */
export interface CompactionResult {
  /** The generation the storage now lives in. */
  generation: number;
  /** The seq the snapshot was taken at (commits after it were caught up into the new tail). */
  seq: number;
  /** Bytes of the old generation's files before, and of the new one right after the switch. */
  bytesBefore: number;
  bytesAfter: number;
  /** Bytes of the new snapshot, and of its tail (the commits caught up) at the switch. */
  snapshotBytes: number;
  tailBytes: number;
  /** What removing the old generation did (failed removals are retried by the next open). */
  cleanup: GenerationCleanup;
}

/** What a compaction needs of the backend. */
export interface CompactionHost {
  readonly fs: FileSystem;
  readonly root: string;
  readonly fsync: boolean;
  readonly index: JsonlIndex;
  readonly generation: number;
  readonly generationDirectory: string;
  /** Called at the capture, between commit calls. */
  onCapture(): void;
  /** Runs `job` between commit calls (on the commit queue). */
  exclusive<T>(job: () => Promise<T>): Promise<T>;
  /** Throws when the storage is poisoned. */
  check(): void;
  /** Poisons the storage (the switch is uncertain) and returns the error to throw. */
  poison(cause: unknown): Error;
  /** Points the backend at the new generation (files, handles); the index is already moved. */
  adopt(generation: number, directory: string): Promise<void>;
  /** Resolves once no history read of the old generation is under way. */
  readsDone(): Promise<void>;
}

function sum(files: JsonlIndex["files"]): number {
  let total = 0;
  for (const extent of files.values()) total += extent.size;
  return total;
}

/** Removes what an abandoned generation directory holds (best effort: the next open finishes it). */
async function abandon(host: CompactionHost, generation: number): Promise<void> {
  const into: GenerationCleanup = { removed: [], setAside: [], deferred: [] };
  const aside = new SetAside(host.fs, host.root, host.fsync);
  await removeGeneration(host.fs, host.root, generation, aside, into).catch(() => undefined);
}

/**
 * One compaction, in four steps:
 *
 * 1. between two commit calls, the index is captured (cheap: references
 *    and copies of the mutable parts) with main.jsonl's size;
 * 2. while commits go on into the old generation, the new one is written
 *    from the capture (snapshot, copied document files, empty tail), what
 *    was committed meanwhile is appended to it byte for byte (`CatchUp`),
 *    all flushed, and the new pointer is written to `CURRENT.tmp`, flushed;
 * 3. between two commit calls again, the last few commits are caught up,
 *    the pointer is renamed over `CURRENT` (the switch; with fsync the
 *    directory is flushed right away) and the backend moves over;
 * 4. without fsync, the directory is flushed now, off the commit line; then
 *    the old generation is removed, after history reads still using it end.
 *
 * A fault before the rename abandons the new generation: the storage goes
 * on in the old one, nothing lost. A fault in the rename or after it leaves
 * the storage uncertain of which generation a crash would find, so it
 * poisons (reopen finds one or the other, both whole). Then the old
 * generation is removed, after history reads still using it end.
 */
export async function compact(host: CompactionHost, next: number): Promise<CompactionResult> {
  const { fs, root } = host;
  const to = `${root}/${generationDir(next)}`;
  const start = await host.exclusive(async () => {
    host.check();
    const mainSize = (await fs.stat(`${host.generationDirectory}/${MAIN_FILE}`))?.size ?? 0;
    const old = (await fs.stat(`${host.generationDirectory}/${SNAPSHOT_FILE}`))?.size ?? 0;
    host.onCapture();
    return {
      from: host.generationDirectory,
      previous: host.generation,
      taken: { ...capture(host.index), mainSize },
      bytesBefore: old + mainSize + sum(host.index.files),
    };
  });
  let written: Awaited<ReturnType<typeof writeGeneration>>;
  try {
    await fs.mkdir(to);
    await fs.flush(root);
    written = await writeGeneration(fs, start.from, to, next, start.taken);
  } catch (error) {
    await abandon(host, next);
    throw error;
  }
  // Most of the catching up, and the pointer's temp file, while commits go on.
  const catchUp = new CatchUp(fs, start.from, to, start.taken, written.copied);
  try {
    await catchUp.to(await host.exclusive(() => oldExtents(fs, start.from, host.index)), true);
    await preparePointer(fs, root, next);
  } catch (error) {
    await abandon(host, next);
    await fs.remove(`${root}/${POINTER_TEMP}`).catch(() => undefined);
    throw error;
  }
  const after = await host.exclusive(async () => {
    host.check();
    let caught: CaughtUp;
    try {
      // The last few commits. Flushed only with fsync: without it they are not promised to
      // survive power loss, and everything older is flushed already.
      await catchUp.to(await oldExtents(fs, start.from, host.index), host.fsync);
      caught = catchUp.result(host.index);
    } catch (error) {
      await abandon(host, next);
      await fs.remove(`${root}/${POINTER_TEMP}`).catch(() => undefined);
      throw error;
    }
    try {
      await switchPointer(fs, root, host.fsync);
      moveIndex(host.index, caught);
      await host.adopt(next, to);
    } catch (error) {
      throw host.poison(error);
    }
    const tail = (await fs.stat(`${to}/${MAIN_FILE}`))?.size ?? 0;
    return { total: written.snapshotBytes + tail + sum(host.index.files), tail };
  });
  // Without fsync the switch is made durable here, off the commit line, and before the old
  // generation goes: a failure leaves the old generation in place (the next open removes it).
  if (!host.fsync)
    try {
      await fs.flush(root);
    } catch (error) {
      const cleanup: GenerationCleanup = {
        removed: [],
        setAside: [],
        deferred: [{ file: generationDir(start.previous), error: String(error) }],
      };
      return {
        generation: next,
        seq: start.taken.seq,
        bytesBefore: start.bytesBefore,
        bytesAfter: after.total,
        snapshotBytes: written.snapshotBytes,
        tailBytes: after.tail,
        cleanup,
      };
    }
  await host.readsDone();
  const cleanup: GenerationCleanup = { removed: [], setAside: [], deferred: [] };
  const aside = new SetAside(fs, root, host.fsync);
  try {
    await removeGeneration(fs, root, start.previous, aside, cleanup);
    if (cleanup.removed.length > 0) await fs.flush(root);
  } catch (error) {
    cleanup.deferred.push({ file: generationDir(start.previous), error: String(error) });
  }
  return {
    generation: next,
    seq: start.taken.seq,
    bytesBefore: start.bytesBefore,
    bytesAfter: after.total,
    snapshotBytes: written.snapshotBytes,
    tailBytes: after.tail,
    cleanup,
  };
}
