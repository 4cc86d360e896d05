import { registerHarnessConformance } from "@durably/contract-tests";
import { describe, it } from "vitest";
import { openSqliteStorage } from "../src/index.js";
import { sqliteFactory } from "./support/storage-factory.js";

// The harness over SQLite: runs in this process, and the three
// SIGKILL scenarios (mid-stream, mid safe tool, mid unsafe tool) in a real
// child process (node + tsx over the TypeScript sources), resumed here.
registerHarnessConformance({ describe, it }, "SqliteStorage", {
  persistent: true,
  factory: sqliteFactory(),
  crash: {
    childModule: new URL("./crash/open-child.ts", import.meta.url),
    open: (path) => openSqliteStorage(path),
    nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  },
});
