import { registerCrashConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { openSqliteStorage } from "../src/index.js";

// The shared kill -9 suite: a real child process (node + tsx over the TypeScript
// sources) commits through a Session on one SQLite file and is SIGKILLed at
// seeded random moments; this process reopens the file and checks it.
registerCrashConformance({ describe, it, expect }, "SqliteStorage", {
  childModule: new URL("./crash/open-child.ts", import.meta.url),
  open: (path) => openSqliteStorage(path),
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
});
