import type { Pool, PoolConfig } from "pg";
import { PostgresHost } from "./host.js";
import { ioFailure, serverOfConfig } from "./open-errors.js";
import type { PostgresStorage } from "./postgres-storage.js";
import { checkSessionKey } from "./session-key.js";

export interface OpenPostgresStorageOptions {
  /** A pool of the application's; the storage takes its connections from it and never ends it. */
  pool?: Pool;
  /** Or a connection string; the storage then creates (and on close ends) its own small pool. */
  connectionString?: string;
  /** Pool settings used with `connectionString` (default `max: 4`, at least 2). */
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
 * It is a host of one (see `openPostgresHost`), closed with the storage.
 *
 * A driver error on the way (no connection, an unknown database, a refused
 * login, a missing right) rejects with `StorageIOError` naming the server
 * (`host:port/database`, never the password) and the session, the driver's
 * error as `cause`; nothing was changed, so opening again once the cause is
 * fixed may succeed.
 */
export async function openPostgresStorage(
  options: OpenPostgresStorageOptions,
): Promise<PostgresStorage> {
  if (typeof options !== "object" || options === null)
    throw new TypeError("openPostgresStorage: options must be an object");
  const session = checkSessionKey("openPostgresStorage", options.session);
  const { max, ...poolConfig } = options.poolConfig ?? {};
  // Named lazily: resolving the server builds a client (which never connects).
  const failure = (error: unknown) =>
    ioFailure(
      error,
      serverOfConfig(options.pool ?? { ...poolConfig, connectionString: options.connectionString }),
      `opening session ${JSON.stringify(session)}`,
    );
  const host = await PostgresHost.start(
    {
      ...(options.pool === undefined ? {} : { pool: options.pool }),
      ...(options.connectionString === undefined
        ? {}
        : { connectionString: options.connectionString }),
      poolConfig,
      // One connection holds the liveness lock; a host needs one more to commit and read.
      maxConnections: Math.max(2, max ?? 4),
      ...(options.schema === undefined ? {} : { schema: options.schema }),
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      ...(options.owner === undefined ? {} : { owner: options.owner }),
    },
    // Named after the session, so pg_stat_activity shows which connections serve it.
    {
      applicationName: `durably ${session}`,
      closeWithLastSession: true,
      caller: "openPostgresStorage",
    },
  ).catch((error: unknown) => {
    throw failure(error);
  });
  try {
    return await host.open(session);
  } catch (error) {
    await host.close().catch(() => undefined);
    throw failure(error);
  }
}
