/**
 * The file operations the JSONL backend performs, and nothing else. Every
 * byte the backend reads or writes goes through this port, so tests can
 * inject faults (an append that fails before, after or half way) and other
 * runtimes can plug in their own file API. Paths are absolute.
 */
export interface FileSystem {
  /** Creates the directory (and missing parents); no-op when it exists. */
  mkdir(path: string): Promise<void>;
  /** Names (not paths) of the entries of a directory. */
  list(directory: string): Promise<string[]>;
  /** Size of a file, or `undefined` when it does not exist. */
  stat(path: string): Promise<{ size: number } | undefined>;
  /**
   * The whole file, or `length` bytes from `offset` when a range is given;
   * `undefined` when the file does not exist. A range past the end returns
   * the bytes that exist.
   */
  read(path: string, range?: { offset: number; length: number }): Promise<Uint8Array | undefined>;
  /** Opens a file for appending, creating it when missing. */
  openAppend(path: string): Promise<AppendFile>;
  /** Creates or replaces a file with `data` (not atomic: write a temp file, then `rename`). */
  write(path: string, data: Uint8Array): Promise<void>;
  /** Forces a file's data, or a directory's entries, to stable storage (fsync). */
  flush(path: string): Promise<void>;
  /** Atomically replaces `to` with `from`. */
  rename(from: string, to: string): Promise<void>;
  /** Deletes a file; no-op when it does not exist. */
  remove(path: string): Promise<void>;
  /**
   * Removes an empty directory (fails when it is not empty). Optional: a
   * file system without it leaves the empty directory of a generation a
   * compaction superseded.
   */
  removeDirectory?(path: string): Promise<void>;
  /** Cuts a file to `size` bytes. */
  truncate(path: string, size: number): Promise<void>;
  /**
   * Takes the single-owner lock at `path`. Throws `StorageLocked` while a
   * live owner holds it; a lock left by a dead owner is taken over.
   */
  lock(path: string): Promise<FileLock>;
}

/** An open append-only file. */
export interface AppendFile {
  readonly path: string;
  /** Appends every byte of `data` at the end of the file (resolves once all are written). */
  append(data: Uint8Array): Promise<void>;
  /** Forces the file's data to stable storage (fsync). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface FileLock {
  /** Gives the lock up (removes the lock file if it is still this owner's). Idempotent. */
  release(): Promise<void>;
}
