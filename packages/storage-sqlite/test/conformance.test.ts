import { join } from "node:path";
import { registerStorageConformance } from "@durably/contract-tests";
import type { Storage } from "@durably/core";
import { describe, expect, it } from "vitest";
import { openSqliteStorage } from "../src/index.js";
import { tempDir } from "./helpers.js";

// Each scenario gets a fresh file in a fresh directory; reopen closes the current
// instance and opens the same file again, as a restarted process would.
registerStorageConformance({ describe, it, expect }, "SqliteStorage", async (use) => {
  const dir = tempDir("durably-sqlite-conformance-");
  const path = join(dir.dir, "storage.sqlite");
  let current: Storage = await openSqliteStorage(path);
  try {
    await use(current, async () => {
      await current.close();
      current = await openSqliteStorage(path);
      return current;
    });
  } finally {
    await current.close();
    dir.cleanup();
  }
});
