import { registerTaskConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { jsonlFactory } from "./support/storage-factory.js";

// Recovery cases cross a real close and reopen of the same directory.
registerTaskConformance({ describe, it, expect }, "JSONL storage", jsonlFactory());
