import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import pg from "pg";
import type { Pool, PoolConfig } from "pg";
import { PostgresStorage } from "./postgres-storage.js";
import { checkSchemaName } from "./schema.js";

export interface OpenPostgresStorageOptions {
  /** A pool of the application's; the storage takes one connection from it for as long as it is open. */
  pool?: Pool;
  /** Or a connection string; the storage then creates (and on close ends) its own small pool. */
  connectionString?: string;
  /** Pool settings used with `connectionString` (default `max: 4`). */
  poolConfig?: Omit<PoolConfig, "connectionString">;
  /** The session key: many sessions share one database, each under its own key. */
  session: string;
  /** Schema for Durably's tables. Default `"durably"`. */
  schema?: string;
  /** Lease length in milliseconds (renewed every third of it). Default 30000. */
  leaseMs?: number;
  /** Names this owner in the lease row. Default `<hostname>:<pid>:<random>`. */
  owner?: string;
}

/**
 * Opens one session of a PostgreSQL database as a Durably storage: runs the
 * schema migrations if needed and takes the session's lease. While this
 * storage is open no other process (or storage in this one) can open the
 * same session; a takeover after the lease expired fences this one out.
 */
export async function openPostgresStorage(
  options: OpenPostgresStorageOptions,
): Promise<PostgresStorage> {
  if (typeof options !== "object" || options === null)
    throw new TypeError("openPostgresStorage: options must be an object");
  const { session } = options;
  // U+0000 and lone surrogates cannot be stored exactly in text, so two such keys could meet.
  if (
    typeof session !== "string" ||
    session.length === 0 ||
    session.length > 1000 ||
    session.includes("\u0000") ||
    /\p{Surrogate}/u.test(session)
  )
    throw new TypeError(
      `openPostgresStorage: session must be a non-empty, well-formed string of at most 1000 characters without U+0000, got ${JSON.stringify(session)}`,
    );
  const schema = checkSchemaName(options.schema ?? "durably");
  const leaseMs = options.leaseMs ?? 30_000;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 100)
    throw new RangeError(
      `openPostgresStorage: leaseMs must be an integer of at least 100, got ${leaseMs}`,
    );
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  if (typeof owner !== "string" || owner.length === 0)
    throw new TypeError("openPostgresStorage: owner must be a non-empty string");
  if ((options.pool === undefined) === (options.connectionString === undefined))
    throw new TypeError("openPostgresStorage: pass exactly one of pool or connectionString");
  let pool = options.pool;
  if (pool === undefined) {
    pool = new pg.Pool({
      max: 4,
      ...options.poolConfig,
      connectionString: options.connectionString,
    });
    // An idle connection dying (a server restart) is reported here; the pool replaces it.
    pool.on("error", () => undefined);
  }
  return PostgresStorage.open(pool, {
    schema,
    session,
    owner,
    leaseMs,
    ownsPool: options.pool === undefined,
  });
}
