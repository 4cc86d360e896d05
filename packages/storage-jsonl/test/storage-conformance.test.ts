import { registerStorageConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { compactingAfterEveryCommit, compactingOnClose } from "./support/background-compaction.js";
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
// Compacted, closed and reopened after every commit: every read comes from a snapshot and its tail.
registerStorageConformance(
  api,
  "JSONL storage compacted and reopened after every commit",
  jsonlFactory({ reopenAfterEveryCommit: true, wrap: compactingOnClose }),
);
// A compaction started (not awaited) after every commit: later commits and reads overlap it.
registerStorageConformance(
  api,
  "JSONL storage compacting in the background after every commit",
  jsonlFactory({ wrap: compactingAfterEveryCommit }),
);
