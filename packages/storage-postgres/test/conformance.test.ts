import {
  registerSessionConformance,
  registerStorageConformance,
  registerTaskConformance,
  type StorageFactory,
} from "@durably/contract-tests";
import type { Storage } from "@durably/core";
import { describe, expect, it } from "vitest";
import { freshSession, openTestStorage, PG_URL, SKIP_REASON } from "./support/server.js";

// Each scenario gets its own session key in the shared test database; reopen
// closes the storage and opens the same session again, as a restarted server would.
const factory: StorageFactory = async (use) => {
  const session = freshSession("conformance");
  let current: Storage = await openTestStorage(session);
  try {
    await use(current, async () => {
      await current.close();
      current = await openTestStorage(session);
      return current;
    });
  } finally {
    await current.close();
  }
};

if (PG_URL) {
  registerStorageConformance({ describe, it, expect }, "PostgresStorage", factory);
  registerSessionConformance({ describe, it, expect }, "PostgresStorage", factory);
  registerTaskConformance({ describe, it, expect }, "PostgresStorage", factory);
} else it.skip(`PostgresStorage conformance: ${SKIP_REASON}`, () => undefined);
