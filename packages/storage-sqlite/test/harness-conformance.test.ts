import { join } from "node:path";
import { registerHarnessConformance } from "@durably/contract-tests";
import type { Storage } from "@durably/core";
import { describe, it } from "vitest";
import { openSqliteStorage } from "../src/index.js";
import { tempDir } from "./helpers.js";

// The harness over SQLite: runs in this process, and the three
// SIGKILL scenarios (mid-stream, mid safe tool, mid unsafe tool) in a real
// child process (node + tsx over the TypeScript sources), resumed here.
registerHarnessConformance({ describe, it }, "SqliteStorage", {
  persistent: true,
  factory: async (use) => {
    const dir = tempDir("durably-sqlite-harness-");
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
  },
  crash: {
    childModule: new URL("./crash/open-child.ts", import.meta.url),
    open: (path) => openSqliteStorage(path),
    nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  },
});
