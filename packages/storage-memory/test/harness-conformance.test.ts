import { registerHarnessConformance } from "@durably/contract-tests";
import { describe, it } from "vitest";
import { MemoryStorage } from "../src/index.js";

// The harness over memory: the in-process scenarios (memory keeps
// nothing across a process, so the SIGKILL scenarios are for the file backends).
registerHarnessConformance({ describe, it }, "MemoryStorage", {
  factory: async (use) => {
    const storage = new MemoryStorage();
    try {
      await use(storage);
    } finally {
      await storage.close();
    }
  },
});
