import { registerSessionConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { jsonlFactory } from "./support/storage-factory.js";

const api = { describe, it, expect };

// A real Session over JSONL, with and without fsync (the Session's fault
// injection wraps the storage port, so the files are real).
// Only without fsync: the large-value case writes over 500 MB.
registerSessionConformance(api, "JSONL storage", jsonlFactory(), { largeValues: true });
registerSessionConformance(api, "JSONL storage (fsync)", jsonlFactory({ fsync: true }));
