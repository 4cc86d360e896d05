import { registerStorageConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { jsonlFactory } from "./support/storage-factory.js";

const api = { describe, it, expect };

registerStorageConformance(api, "JSONL storage", jsonlFactory());
registerStorageConformance(api, "JSONL storage (fsync)", jsonlFactory({ fsync: true }));
// Closed and reopened after every commit: nothing kept only in memory survives to hide a missing write.
registerStorageConformance(
  api,
  "JSONL storage reopened after every commit",
  jsonlFactory({ reopenAfterEveryCommit: true }),
);
