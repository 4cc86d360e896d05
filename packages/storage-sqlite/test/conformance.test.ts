import { join } from "node:path";
import { registerStorageConformance } from "@durably/contract-tests";
import type { Storage } from "@durably/core";
import { describe, expect, it } from "vitest";
import { openSqliteStorage } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { ReopeningStorage } from "./support/reopening-storage.js";

/**
 * Each scenario gets a fresh file in a fresh directory; reopen closes the
 * current instance and opens the same file again, as a restarted process
 * would. With `reopenEveryCommit`, the storage under test is itself closed
 * and reopened after every commit, so nothing kept only in memory survives.
 */
function factory(reopenEveryCommit: boolean) {
  return async (use: (storage: Storage, reopen?: () => Promise<Storage>) => Promise<void>) => {
    const dir = tempDir("durably-sqlite-conformance-");
    const path = join(dir.dir, "storage.sqlite");
    const open = (): Promise<Storage> =>
      reopenEveryCommit
        ? ReopeningStorage.open(() => openSqliteStorage(path))
        : openSqliteStorage(path);
    let current = await open();
    try {
      await use(current, async () => {
        await current.close();
        current = await open();
        return current;
      });
    } finally {
      await current.close();
      dir.cleanup();
    }
  };
}

registerStorageConformance({ describe, it, expect }, "SqliteStorage", factory(false));
registerStorageConformance(
  { describe, it, expect },
  "SqliteStorage reopened after every commit",
  factory(true),
);
