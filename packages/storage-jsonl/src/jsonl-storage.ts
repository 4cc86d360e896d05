import { resolve } from "node:path";
import { CheckedStorage } from "@durably/core/storage";
import type { AppendFile, FileSystem } from "./file-system.js";
import { JsonlBackend } from "./jsonl-backend.js";
import { LOCK_FILE, MAIN_FILE } from "./line-format.js";
import { nodeFileSystem } from "./node-file-system.js";
import { recover, type RecoveryReport } from "./recovery.js";

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
}

/**
 * Opens (creating if needed) a JSONL storage in `directory`: takes the
 * single-owner lock, recovers the confirmed state from the files, and is
 * ready. Fails with `StorageLocked` while another live process has it open,
 * and with `StorageCorrupted` (naming file and line) when confirmed data is
 * damaged or missing.
 */
export async function openJsonlStorage(
  directory: string,
  options: JsonlStorageOptions = {},
): Promise<JsonlStorage> {
  const fs = options.fs ?? nodeFileSystem;
  const fsync = options.fsync ?? false;
  const dir = resolve(directory);
  await fs.mkdir(dir);
  const lock = await fs.lock(`${dir}/${LOCK_FILE}`);
  let main: AppendFile | undefined;
  try {
    const { state, report } = await recover(fs, dir, fsync);
    main = await fs.openAppend(`${dir}/${MAIN_FILE}`);
    const backend = new JsonlBackend(fs, dir, fsync, lock, main, state, options.maxOpenFiles ?? 64);
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

  /** @internal use `openJsonlStorage` */
  constructor(
    backend: JsonlBackend,
    /** What open found and repaired. */
    readonly recovery: RecoveryReport,
  ) {
    super(backend);
    this.directory = backend.directory;
  }
}
