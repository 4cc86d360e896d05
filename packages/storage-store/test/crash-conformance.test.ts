import { registerCrashConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { open } from "./crash/open-child.js";

// The shared kill -9 suite over StoreStorage on classic-level (LevelDB on disk):
// a real child process commits through a Session and is SIGKILLed at seeded
// random moments; this process reopens the database and checks it.
registerCrashConformance({ describe, it, expect }, "StoreStorage on classic-level", {
  childModule: new URL("./crash/open-child.ts", import.meta.url),
  open,
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
});
