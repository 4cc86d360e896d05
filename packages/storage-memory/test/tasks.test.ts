import { registerTaskConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../src/index.js";

registerTaskConformance({ describe, it, expect }, "MemoryStorage", async (use) => {
  const storage = new MemoryStorage();
  try {
    await use(storage);
  } finally {
    await storage.close();
  }
});
