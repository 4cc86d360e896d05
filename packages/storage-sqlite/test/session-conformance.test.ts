import { registerSessionConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { sqliteFactory } from "./support/storage-factory.js";

// A real Session over real SQLite files (the Session's fault injection wraps the storage port).
registerSessionConformance({ describe, it, expect }, "SqliteStorage", sqliteFactory());
