import { registerTaskConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { sqliteFactory } from "./support/storage-factory.js";

// Recovery cases cross a real close and reopen of the same database file.
registerTaskConformance({ describe, it, expect }, "SqliteStorage", sqliteFactory());
