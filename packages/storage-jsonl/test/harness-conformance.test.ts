import { registerHarnessConformance } from "@durably/contract-tests";
import type { Storage } from "@durably/core";
import { describe, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { tempDir } from "./support/temp-dir.js";

// The harness over JSONL: runs in this process, and the three
// SIGKILL scenarios (mid-stream, mid safe tool, mid unsafe tool) in a real
// child process (node + tsx over the TypeScript sources), resumed here.
registerHarnessConformance({ describe, it }, "JSONL storage", {
  persistent: true,
  factory: async (use) => {
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
  },
  crash: {
    childModule: new URL("./crash/open-child.ts", import.meta.url),
    open: (path) => openJsonlStorage(path),
    nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  },
});
