import { randomUUID } from "node:crypto";
import {
  persistentStorageFactory,
  type PersistentFactoryOptions,
  type StorageFactory,
} from "@durably/contract-tests";
import pg from "pg";
import { inject } from "vitest";
import {
  openPostgresStorage,
  type OpenPostgresStorageOptions,
  type PostgresStorage,
} from "../../src/index.js";

/** The test server's URL, also exported for crash children (they inherit the environment). */
export const PG_URL = inject("pgUrl");
export const SKIP_REASON = inject("pgSkipReason");
if (PG_URL) process.env.DURABLY_PG_URL = PG_URL;
else console.warn(`storage-postgres tests skipped: ${SKIP_REASON}`);

/** A session key no other test uses. */
export function freshSession(prefix = "test"): string {
  return `${prefix}-${randomUUID()}`;
}

export function openTestStorage(
  session: string,
  options: Partial<OpenPostgresStorageOptions> = {},
): Promise<PostgresStorage> {
  return openPostgresStorage({
    connectionString: PG_URL,
    session,
    poolConfig: { max: 3 },
    ...options,
  });
}

/** A pool for tests that look at the tables directly. */
export function testPool(): pg.Pool {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  pool.on("error", () => undefined);
  return pool;
}

/**
 * The conformance suites' factory: each test gets its own session key in the
 * shared test database; `reopen` closes the storage and opens the same
 * session again, as a restarted server would.
 */
export function sessionFactory(
  prefix: string,
  options: PersistentFactoryOptions = {},
): StorageFactory {
  return persistentStorageFactory(() => {
    const session = freshSession(prefix);
    return { open: () => openTestStorage(session) };
  }, options);
}
