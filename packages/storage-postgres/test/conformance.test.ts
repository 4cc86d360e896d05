import {
  registerSessionConformance,
  registerStorageConformance,
  registerTaskConformance,
} from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { PG_URL, SKIP_REASON, sessionFactory } from "./support/server.js";

const api = { describe, it, expect };

if (PG_URL) {
  const factory = sessionFactory("conformance");
  registerStorageConformance(api, "PostgresStorage", factory);
  registerSessionConformance(api, "PostgresStorage", factory);
  registerTaskConformance(api, "PostgresStorage", factory);
  // Closed and reopened after every commit: the next seq, the id high-water mark and anything
  // cached per instance are read back from the database each time.
  registerStorageConformance(
    api,
    "PostgresStorage reopened after every commit",
    sessionFactory("reopening", { reopenAfterEveryCommit: true }),
  );
} else it.skip(`PostgresStorage conformance: ${SKIP_REASON}`, () => undefined);
