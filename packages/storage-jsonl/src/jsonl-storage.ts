import { resolve } from "node:path";
import { StorageCorrupted } from "@durably/core";
import { CheckedStorage } from "@durably/core/storage";
import type { CompactionResult } from "./compaction.js";
import type { AppendFile, FileSystem } from "./file-system.js";
import { generationDir, parseGenerationDir, readCurrent } from "./generation.js";
import { removeOtherGenerations } from "./generation-cleanup.js";
import { JsonlBackend } from "./jsonl-backend.js";
import { LOCK_FILE, MAIN_FILE } from "./line-format.js";
import { nodeFileSystem } from "./node-file-system.js";
import { openFailure } from "./open-errors.js";
import { recover, type RecoveryReport } from "./recovery.js";
import { SizeTrigger, type CompactionOptions } from "./size-trigger.js";
import { SNAPSHOT_FILE } from "./snapshot-format.js";
import { loadSnapshot, type LoadedSnapshot } from "./snapshot-reader.js";

export interface JsonlStorageOptions {
  /**
   * Flush (fsync) sidecars, then main.jsonl, before a commit resolves, so
   * acknowledged commits survive power loss. Default `false`: acknowledged
   * commits survive a process crash, not necessarily an OS crash.
   */
  fsync?: boolean;
  /** The file system to use (default: `nodeFileSystem`). Tests inject faults here. */
  fs?: FileSystem;
  /** Most sidecar append handles kept open between commits (default 64). */
  maxOpenFiles?: number;
  /**
   * When a compaction starts by itself, in the background, after a commit:
   * once the files hold `ratio` (default 4) times the estimated live data
   * and at least `minBytes` (default 8 MiB). `false`: only `compact()`.
   */
  compaction?: CompactionOptions | false;
}

/** A `StorageCorrupted` from inside a generation's directory, its file named from the storage directory. */
function inGeneration(error: unknown, generation: number): unknown {
  if (generation === 0 || !(error instanceof StorageCorrupted)) return error;
  const prefix = `${generationDir(generation)}/`;
  const file = error.location.file;
  if (file?.startsWith(prefix) === true) return error; // named from the storage directory already
  return new StorageCorrupted(
    `${prefix}${error.message}`,
    { ...error.location, ...(file === undefined ? {} : { file: `${prefix}${file}` }) },
    { cause: error.cause ?? error },
  );
}

/** Names the files recovery repaired inside a generation from the storage directory, as the rest of the report does. */
function nameFromRoot(report: RecoveryReport, prefix: string): void {
  for (const item of report.truncated) item.file = `${prefix}${item.file}`;
  for (const item of report.setAside) item.file = `${prefix}${item.file}`;
  for (const item of report.deferred) item.file = `${prefix}${item.file}`;
  report.removed = report.removed.map((file) => `${prefix}${file}`);
}

/**
 * Opens (creating if needed) a JSONL storage in `directory`: takes the
 * single-owner lock, finds the current generation, recovers the confirmed
 * state from its files, removes generations a compaction superseded or
 * abandoned, and is ready. Fails with `StorageLocked` while another live
 * process has it open, and with `StorageCorrupted` (naming file and line)
 * when confirmed data is damaged or missing, and with `StorageIOError` (naming
 * the file and the call) when the operating system fails a read or a repair.
 */
export async function openJsonlStorage(
  directory: string,
  options: JsonlStorageOptions = {},
): Promise<JsonlStorage> {
  const dir = resolve(directory);
  try {
    return await openAt(dir, options);
  } catch (error) {
    throw openFailure(error, dir);
  }
}

async function openAt(dir: string, options: JsonlStorageOptions): Promise<JsonlStorage> {
  const fs = options.fs ?? nodeFileSystem;
  const fsync = options.fsync ?? false;
  await fs.mkdir(dir);
  const lock = await fs.lock(`${dir}/${LOCK_FILE}`);
  let main: AppendFile | undefined;
  try {
    const names = await fs.list(dir);
    const current = await readCurrent(fs, dir, names);
    let snapshot: LoadedSnapshot | undefined;
    const recovered = await (async () => {
      if (current.generation > 0) {
        const where = `${generationDir(current.generation)}/${SNAPSHOT_FILE}`;
        snapshot = await loadSnapshot(fs, current.directory, where, current.generation);
      }
      return recover(fs, current.directory, fsync, snapshot && { snapshot, root: dir });
    })().catch((error: unknown) => {
      throw inGeneration(error, current.generation);
    });
    const { state, report } = recovered;
    if (current.generation > 0) nameFromRoot(report, `${generationDir(current.generation)}/`);
    const cleanup = await removeOtherGenerations(fs, dir, names, current, fsync);
    report.removed.push(...cleanup.removed);
    report.setAside.push(...cleanup.setAside);
    report.deferred.push(...cleanup.deferred);
    main = await fs.openAppend(`${current.directory}/${MAIN_FILE}`);
    const known = names.map(parseGenerationDir).filter((g): g is number => g !== undefined);
    const next = Math.max(current.generation, ...known) + 1;
    const trigger =
      options.compaction === false
        ? undefined
        : new SizeTrigger(options.compaction ?? {}, {
            snapshotBytes: snapshot?.size ?? 0,
            mainBytes: recovered.log.bytes,
            keptMarkerBytes: recovered.log.keptBytes,
          });
    const backend = new JsonlBackend(
      fs,
      dir,
      fsync,
      lock,
      { generation: current.generation, directory: current.directory, main, next },
      state,
      options.maxOpenFiles ?? 64,
      trigger,
    );
    await backend.reclaimAfterOpen();
    return new JsonlStorage(backend, report);
  } catch (error) {
    await main?.close().catch(() => undefined);
    await lock.release().catch(() => undefined);
    throw error;
  }
}

/** The Storage port over append-only JSONL files. Create it with `openJsonlStorage`. */
export class JsonlStorage extends CheckedStorage {
  /** The absolute directory holding the files. */
  readonly directory: string;
  private readonly jsonl: JsonlBackend;

  /** @internal use `openJsonlStorage` */
  constructor(
    backend: JsonlBackend,
    /** What open found and repaired. */
    readonly recovery: RecoveryReport,
  ) {
    super(backend);
    this.directory = backend.directory;
    this.jsonl = backend;
  }

  /**
   * Compacts the log now: writes a new generation holding only what is
   * still readable (a snapshot of the records plus the kept document
   * revisions), switches to it atomically and removes the old one. Commits
   * may go on meanwhile; a compaction already under way is joined.
   */
  async compact(): Promise<CompactionResult> {
    this.guard();
    return this.jsonl.compact();
  }

  /** The generation the files live in: `gen-<n>/` (0: at the top of the directory, as written by versions without compaction). */
  get generation(): number {
    return this.jsonl.currentGeneration;
  }

  /** The error of the last compaction started by size, if it failed (such a failure never fails a commit). */
  get lastCompactionError(): unknown {
    return this.jsonl.lastCompactionError;
  }
}
