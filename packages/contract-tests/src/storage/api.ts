import type { Storage } from "@durably/core";

/** The few matchers the suite uses; Vitest's and Jest's `expect` both fit. */
export interface Matchers {
  toEqual(expected: unknown): void;
  toBe(expected: unknown): void;
}
export type ExpectLike = (actual: unknown) => Matchers;

/** The injected test runner (Vitest, Jest, node:test adapters...). The suite never imports one. */
export interface TestApi {
  describe(name: string, body: () => void): unknown;
  /**
   * `body` forwards the arguments the runner calls it with: a test context
   * with a `skip(note)` function (Vitest's) lets the suite report a scenario
   * that does not apply to the storage as skipped rather than passed.
   */
  it(name: string, body: (...context: unknown[]) => Promise<void>, timeoutMs?: number): unknown;
  expect: ExpectLike;
}

/**
 * Closes the current instance (if the test has not already) and opens a new
 * one over the same underlying data, which becomes the current instance.
 */
export type Reopen = () => Promise<Storage>;

/**
 * Runs `use` with a fresh, empty storage and cleans up afterwards. A
 * persistent adapter also passes `reopen`; the factory must close whichever
 * instance is current when `use` settles (close is idempotent).
 */
export type StorageFactory = (
  use: (storage: Storage, reopen?: Reopen) => Promise<void>,
) => Promise<void>;

/** The rule groups of the storage contract, in RULES.md order. */
export type StorageRule =
  | "atomic batches"
  | "per-batch seq"
  | "refusal"
  | "read your commit"
  | "detachment"
  | "ids"
  | "scans"
  | "entry scans"
  | "submissions"
  | "documents"
  | "persistence"
  | "closing";

export interface StorageConformanceOptions {
  /** Register only these rule groups (e.g. while developing an adapter). Default: every group. */
  rules?: readonly StorageRule[];
}
