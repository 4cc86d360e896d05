import { registerStorageConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { sqliteFactory } from "./support/storage-factory.js";

const api = { describe, it, expect };

registerStorageConformance(api, "SqliteStorage", sqliteFactory());
// Closed and reopened after every commit: whatever the storage keeps only in memory (next seq,
// id counter, known conversations, cached document values) is rebuilt from the file each time.
registerStorageConformance(
  api,
  "SqliteStorage reopened after every commit",
  sqliteFactory({ reopenAfterEveryCommit: true }),
);
