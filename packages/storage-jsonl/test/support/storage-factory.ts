import type { Storage } from "@durably/core";
import { persistentStorageFactory, type StorageFactory } from "@durably/contract-tests";
import { openJsonlStorage, type JsonlStorage } from "../../src/index.js";
import { tempDir } from "./temp-dir.js";

/**
 * The conformance suites' factory for JSONL: a fresh temp directory per
 * test; `reopen` closes the storage and opens the same directory again, as
 * a restarted process would. `wrap` puts something around each instance
 * opened (a compaction before its close, say).
 */
export function jsonlFactory(
  options: {
    fsync?: boolean;
    reopenAfterEveryCommit?: boolean;
    wrap?: (storage: JsonlStorage) => Storage;
  } = {},
): StorageFactory {
  const { fsync = false, reopenAfterEveryCommit = false, wrap } = options;
  return persistentStorageFactory(
    () => {
      const dir = tempDir();
      const open = async () => {
        const storage = await openJsonlStorage(dir.path, { fsync });
        return wrap ? wrap(storage) : storage;
      };
      return { open, remove: () => dir.remove() };
    },
    { reopenAfterEveryCommit },
  );
}
