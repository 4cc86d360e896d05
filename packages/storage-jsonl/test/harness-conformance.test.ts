import { registerHarnessConformance } from "@durably/contract-tests";
import { describe, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { jsonlFactory } from "./support/storage-factory.js";

// The harness over JSONL: runs in this process, and the three
// SIGKILL scenarios (mid-stream, mid safe tool, mid unsafe tool) in a real
// child process (node + tsx over the TypeScript sources), resumed here.
registerHarnessConformance({ describe, it }, "JSONL storage", {
  persistent: true,
  factory: jsonlFactory(),
  crash: {
    childModule: new URL("./crash/open-child.ts", import.meta.url),
    open: (path) => openJsonlStorage(path),
    nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  },
});
