import type { Storage } from "@durably/core";

/**
 * The slice of a test runner the crash suite calls. Vitest and Jest match it;
 * the runner is injected, never imported.
 */
export interface CrashTestApi {
  describe(name: string, body: () => void): unknown;
  /** `timeoutMs` is passed as the third argument, as Vitest and Jest take it. */
  it(name: string, body: () => Promise<void>, timeoutMs?: number): unknown;
  /** Accepted so the same `{ describe, it, expect }` object serves every suite; the crash suite throws its own errors. */
  expect?: unknown;
}

/**
 * Damage a corruption hook applies to a closed storage:
 * - `"flip-byte"`: change one byte of stored, committed data so it no longer
 *   decodes (the backend's own checks must notice it);
 * - `"truncate-middle-line"`: cut a committed record short while records
 *   after it stay in place (for JSONL: drop the tail of a line that is not
 *   the last one, keeping its newline and every later line).
 */
export type CorruptionKind = "flip-byte" | "truncate-middle-line";

export interface CrashConformanceOptions {
  /**
   * Module the child process imports (absolute path or URL). It must export
   * `open(path: string): Promise<Storage>` opening the backend at `path`.
   */
  childModule: string | URL;
  /** Opens the same backend at `path` in the test process (used to verify after each kill). */
  open: (path: string) => Promise<Storage>;
  /**
   * Arguments for the child `node` process before the runner script, e.g.
   * `["--conditions=@durably/source", "--import", "tsx"]` to load TypeScript
   * sources. Default: none (the runner and `childModule` must be JavaScript).
   */
  nodeArgs?: readonly string[];
  /**
   * File backends: damage the closed storage at `path`. The backend's test
   * implements it because it knows its files. Without it the corruption
   * scenarios are skipped.
   */
  corrupt?: (path: string, kind: CorruptionKind) => Promise<void>;
  /**
   * Kill-and-reopen cycles per kill scenario. Default 8; the `CRASH_ITERATIONS`
   * environment variable overrides it (soak runs).
   */
  iterations?: number;
  /**
   * File backends: which files are the backend's own, for the syscall-fault
   * scenarios (real `strace -e inject=...` faults in the child's writes,
   * syncs, renames, opens, truncates and removes of those files). Without it
   * those scenarios are not registered.
   */
  syscallFaults?: SyscallFaultOptions;
  /**
   * Seed of the kill schedule. Default: random per run (printed with every
   * failure); the `CRASH_SEED` environment variable overrides both.
   */
  seed?: number;
}

/** What the syscall-fault scenarios need to know about a file backend. */
export interface SyscallFaultOptions {
  /**
   * The files and directories the storage at `path` lives in (absolute, as
   * built from `path`). A directory stands for everything in it, whatever
   * the names: the suite learns the names from two fault-free runs, because
   * strace matches paths exactly. Example: SQLite `[path, `${path}-wal`,
   * `${path}-shm`, `${path}-journal`]`; a directory backend `[path]`.
   */
  files: (path: string) => readonly string[];
  /**
   * Files among those that hold no data and whose failed writes the backend
   * may ignore by design (a diagnostic log): faults are not injected there.
   */
  ignore?: (file: string) => boolean;
  /**
   * Faults per syscall group (write, sync, rename, open, truncate, mkdir,
   * remove) per run. Default 1; the `CRASH_FAULT_ITERATIONS` environment
   * variable overrides it (soak runs).
   */
  samples?: number;
  /**
   * Faults run every time, before the sampled ones, as the `inject=` part of
   * a failure message names them (`{ syscall: "openat", errno: "EMFILE",
   * when: 5 }`): keeps a fault that once broke the backend as a regression
   * case whatever the seed.
   */
  replay?: readonly FaultReplay[];
}

/** One fault to inject on every run: the n-th call of `syscall` on the backend's files (per thread) fails with `errno`. */
export interface FaultReplay {
  syscall: string;
  errno: string;
  when: number;
}
