import { join } from "node:path";
import { persistentStorageFactory, type StorageFactory } from "@durably/contract-tests";
import { openSqliteStorage } from "../../src/index.js";
import { tempDir } from "../helpers.js";

/**
 * The conformance suites' factory for SQLite: a fresh database file in a
 * fresh directory per test; `reopen` closes it and opens the same file
 * again, as a restarted process would.
 */
export function sqliteFactory(options: { reopenAfterEveryCommit?: boolean } = {}): StorageFactory {
  return persistentStorageFactory(
    () => {
      const dir = tempDir("durably-sqlite-conformance-");
      const path = join(dir.dir, "storage.sqlite");
      return { open: () => openSqliteStorage(path), remove: dir.cleanup };
    },
    { reopenAfterEveryCommit: options.reopenAfterEveryCommit ?? false },
  );
}
