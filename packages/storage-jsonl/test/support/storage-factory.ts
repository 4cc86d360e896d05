import { persistentStorageFactory, type StorageFactory } from "@durably/contract-tests";
import { openJsonlStorage } from "../../src/index.js";
import { tempDir } from "./temp-dir.js";

/**
 * The conformance suites' factory for JSONL: a fresh temp directory per
 * test; `reopen` closes the storage and opens the same directory again, as
 * a restarted process would.
 */
export function jsonlFactory(
  options: { fsync?: boolean; reopenAfterEveryCommit?: boolean } = {},
): StorageFactory {
  const { fsync = false, reopenAfterEveryCommit = false } = options;
  return persistentStorageFactory(
    () => {
      const dir = tempDir();
      return { open: () => openJsonlStorage(dir.path, { fsync }), remove: () => dir.remove() };
    },
    { reopenAfterEveryCommit },
  );
}
