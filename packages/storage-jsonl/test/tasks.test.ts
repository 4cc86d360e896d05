import { registerTaskConformance } from "@durably/contract-tests";
import type { Storage } from "@durably/core";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { tempDir } from "./support/temp-dir.js";

// A fresh directory per scenario; reopen closes it and opens the same directory, as a restart would.
registerTaskConformance({ describe, it, expect }, "JSONL storage", async (use) => {
  const dir = tempDir();
  let current: Storage = await openJsonlStorage(dir.path);
  try {
    await use(current, async () => {
      await current.close();
      current = await openJsonlStorage(dir.path);
      return current;
    });
  } finally {
    await current.close();
    dir.remove();
  }
});
