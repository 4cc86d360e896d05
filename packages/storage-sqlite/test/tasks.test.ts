import { join } from "node:path";
import { registerTaskConformance } from "@durably/contract-tests";
import type { Storage } from "@durably/core";
import { describe, expect, it } from "vitest";
import { openSqliteStorage } from "../src/index.js";
import { tempDir } from "./helpers.js";

// A fresh database file per scenario; reopen closes it and opens the same file, as a restart would.
registerTaskConformance({ describe, it, expect }, "SqliteStorage", async (use) => {
  const dir = tempDir("durably-sqlite-tasks-");
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
