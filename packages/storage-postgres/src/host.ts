import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { StorageClosed, StorageLocked, StoragePoisoned } from "@durably/core";
import pg from "pg";
import type { Pool, PoolClient, PoolConfig } from "pg";
import { GroupCommitter, type GroupCommitStats } from "./group-commit.js";
import {
  acquireSessionLease,
  hostLockKey,
  releaseSessionLease,
  renewSessionLeases,
  takeHostLock,
  type HostIdentity,
} from "./host-lease.js";
import { HostSessionBackend, type SessionHost } from "./host-session.js";
import { PostgresStorage } from "./postgres-storage.js";
import { checkSchemaName } from "./schema-name.js";
import { migrate } from "./schema.js";
import { checkPoolSize, checkServer } from "./server-checks.js";
import { checkSessionKey } from "./session-key.js";
import { ioFailure, serverOfConfig } from "./open-errors.js";

export interface OpenPostgresHostOptions {
  /** A pool of the application's: the host takes its connections from it and never ends it. */
  pool?: Pool;
  /** Or a connection string: the host creates (and on close ends) a pool of `maxConnections`. */
  connectionString?: string;
  /** Pool settings used with `connectionString` (its size is `maxConnections`). */
  poolConfig?: Omit<PoolConfig, "connectionString" | "max">;
  /** Schema for Durably's tables. Default `"durably"`. */
  schema?: string;
  /**
   * Connections the host uses at most, its liveness connection included
   * (the rest run commit rounds and reads). Default 8, at least 2. With your
   * own `pool`, that pool's `max` bounds them too.
   */
  maxConnections?: number;
  /** Lease length in milliseconds (renewed every third of it). Default 30000. */
  leaseMs?: number;
  /** Names this host in lease rows and `StorageLocked` messages. Default `<hostname>:<pid>:<random>`. */
  owner?: string;
  /**
   * Send each commit round as ONE statement with bound parameters (the
   * schema's `commit_calls` function taking the calls as jsonb) instead of
   * a multi-statement script with inlined literals. Default false.
   */
  parameterizedCommits?: boolean;
}

/** What a host did so far, for dashboards and tests. */
export interface PostgresHostStats extends GroupCommitStats {
  /** Sessions open now. */
  sessions: number;
  /** Renewal statements sent (one per period, for all sessions). */
  renewals: number;
}

/** @internal How `openPostgresStorage` makes a host of one. */
export interface HostInternals {
  /** `application_name` of the host's own pool's connections. */
  applicationName?: string;
  /** Close the host when its last session closes. */
  closeWithLastSession?: boolean;
  /** The function named in option errors. */
  caller?: string;
  parameterizedCommits?: boolean;
  /** Tests only: a lower bound on a round's size in bytes (see `MAX_ROUND_BYTES` in group-commit.ts). */
  maxRoundBytes?: number;
}

/**
 * Many sessions of one database sharing a few connections: one pool of at
 * most `maxConnections`, one liveness lock, one lease renewal per period,
 * and commits of all sessions grouped into shared transactions.
 */
export class PostgresHost implements SessionHost {
  readonly pool: Pool;
  readonly schema: string;
  readonly committer: GroupCommitter;
  /** Random per host: its liveness lock's key, and `lease_host` in the session rows it holds. */
  readonly hostId: string;
  readonly owner: string;
  /** `application_name` of the connections of the host's own pool (none with your pool). */
  readonly applicationName: string | undefined;
  readonly #identity: HostIdentity;
  readonly #ownsPool: boolean;
  readonly #liveness: PoolClient;
  readonly #sessions = new Map<string, PostgresStorage | "opening">();
  readonly #backends = new Map<string, HostSessionBackend>();
  readonly #renewal: NodeJS.Timeout;
  readonly #closeWithLastSession: boolean;
  #renewing = false;
  #renewals = 0;
  #closing: Promise<void> | undefined;
  #failure: Error | undefined;

  private constructor(
    pool: Pool,
    ownsPool: boolean,
    liveness: PoolClient,
    identity: HostIdentity,
    maxConnections: number,
    internals: HostInternals,
  ) {
    this.pool = pool;
    this.#ownsPool = ownsPool;
    this.#liveness = liveness;
    this.#identity = identity;
    this.schema = identity.schema;
    this.hostId = identity.hostId;
    this.owner = identity.owner;
    this.applicationName = ownsPool ? internals.applicationName : undefined;
    this.#closeWithLastSession = internals.closeWithLastSession === true;
    // The liveness connection is one of maxConnections; rounds use the others (reads share them).
    this.committer = new GroupCommitter(
      pool,
      maxConnections - 1,
      identity.schema,
      internals.parameterizedCommits === true,
      internals.maxRoundBytes,
    );
    liveness.on("error", (error) => this.#fail(error));
    this.#renewal = setInterval(
      () => void this.#renew(),
      Math.max(50, Math.floor(identity.leaseMs / 3)),
    );
    this.#renewal.unref();
  }

  /** @internal Use `openPostgresHost`. */
  static async start(
    options: OpenPostgresHostOptions,
    internals: HostInternals = {},
  ): Promise<PostgresHost> {
    const caller = internals.caller ?? "openPostgresHost";
    if (typeof options !== "object" || options === null)
      throw new TypeError(`${caller}: options must be an object`);
    const schema = checkSchemaName(options.schema ?? "durably");
    const maxConnections = options.maxConnections ?? 8;
    if (!Number.isSafeInteger(maxConnections) || maxConnections < 2)
      throw new RangeError(
        `${caller}: maxConnections must be an integer of at least 2 (one holds the host's liveness lock, the others commit and read), got ${String(maxConnections)}`,
      );
    const leaseMs = options.leaseMs ?? 30_000;
    if (!Number.isSafeInteger(leaseMs) || leaseMs < 100)
      throw new RangeError(
        `${caller}: leaseMs must be an integer of at least 100, got ${String(leaseMs)}`,
      );
    const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    if (typeof owner !== "string" || owner.length === 0)
      throw new TypeError(`${caller}: owner must be a non-empty string`);
    if (
      options.parameterizedCommits !== undefined &&
      typeof options.parameterizedCommits !== "boolean"
    )
      throw new TypeError(`${caller}: parameterizedCommits must be a boolean`);
    if ((options.pool === undefined) === (options.connectionString === undefined))
      throw new TypeError(`${caller}: pass exactly one of pool or connectionString`);
    if (options.pool !== undefined) checkPoolSize(options.pool, 2, caller);
    const hostId = randomUUID();
    const applicationName = (internals.applicationName ?? `durably host ${hostId}`).slice(0, 63);
    let pool = options.pool;
    if (pool === undefined) {
      pool = new pg.Pool({
        application_name: applicationName,
        // A round's replay spans round trips; a host paused inside one would hold its sessions'
        // rows (and block their take-over) for as long as it is paused. The server ends it instead.
        idle_in_transaction_session_timeout: leaseMs,
        // An unreachable server fails the open (or a commit waiting for a connection) instead of hanging.
        connectionTimeoutMillis: 10_000,
        ...options.poolConfig,
        max: maxConnections,
        connectionString: options.connectionString,
      });
      // An idle connection dying (a server restart) is reported here; the pool replaces it.
      pool.on("error", () => undefined);
    }
    const ownsPool = options.pool === undefined;
    const identity: HostIdentity = { schema, hostId, owner, leaseMs };
    let client: PoolClient | undefined;
    let failure: Error | undefined;
    // A checked-out connection reports its death as an event; without a listener it would crash the process.
    const onError = (error: Error) => (failure = error);
    try {
      client = await pool.connect();
      client.on("error", onError);
      // Named even on your pool (the connection is destroyed with the host, so the name goes with it).
      if (!ownsPool)
        await client.query("SELECT set_config('application_name', $1, false)", [applicationName]);
      await checkServer(client, caller);
      await migrate(client, schema);
      await takeHostLock(client, identity);
      if (failure !== undefined) throw failure;
      client.off("error", onError);
      return new PostgresHost(pool, ownsPool, client, identity, maxConnections, {
        ...internals,
        applicationName,
        parameterizedCommits: options.parameterizedCommits === true,
      });
    } catch (error) {
      // Destroying the connection also drops the lock it may hold.
      client?.release(true);
      if (ownsPool) await pool.end().catch(() => undefined);
      throw error;
    }
  }

  failure(): Error | undefined {
    return this.#failure;
  }

  #fail(cause: unknown): void {
    this.#failure ??= new StoragePoisoned(
      `the PostgreSQL host ${this.owner} lost its liveness connection (its sessions may already be taken over); close and reopen them`,
      { cause },
    );
  }

  /**
   * Opens one session through this host: takes its lease (creating the
   * session on first use). Fails with `StorageLocked` while another owner's
   * lease is live and its host alive, or when this host has it open
   * already; with `StorageClosed` once the host is closing. Changes nothing
   * when it fails.
   */
  async open(session: string): Promise<PostgresStorage> {
    checkSessionKey("PostgresHost.open", session);
    this.#checkOpen(`cannot open session ${JSON.stringify(session)}`);
    if (this.#sessions.has(session))
      throw new StorageLocked(
        `session ${JSON.stringify(session)} is already open in this host (${this.owner}); close that storage first`,
        { holder: this.owner },
      );
    this.#sessions.set(session, "opening");
    try {
      const lease = await acquireSessionLease(this.pool, this.#identity, session);
      if (this.#closing !== undefined || this.#failure !== undefined) {
        await releaseSessionLease(this.pool, this.schema, session, lease.token).catch(
          () => undefined,
        );
        this.#checkOpen(`cannot open session ${JSON.stringify(session)}`);
      }
      const backend = new HostSessionBackend(this, session, lease);
      const storage = new PostgresStorage(backend, this.schema);
      this.#sessions.set(session, storage);
      this.#backends.set(session, backend);
      return storage;
    } catch (error) {
      this.#sessions.delete(session);
      throw error;
    }
  }

  #checkOpen(what: string): void {
    if (this.#closing !== undefined)
      throw new StorageClosed(`PostgreSQL host ${this.owner} is closed: ${what}`);
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** @internal A session's storage closed. */
  async closed(session: string): Promise<void> {
    this.#sessions.delete(session);
    this.#backends.delete(session);
    if (this.#closeWithLastSession && this.#sessions.size === 0 && this.#closing === undefined)
      await this.close();
  }

  stats(): PostgresHostStats {
    return { ...this.committer.stats(), sessions: this.#backends.size, renewals: this.#renewals };
  }

  /**
   * One statement renewing every open session's lease; a session whose
   * token no longer holds (taken over after this host was paused past its
   * lease) fails alone with `StorageLocked`. On the liveness connection, so
   * renewals never wait behind commit rounds for a connection.
   */
  async #renew(): Promise<void> {
    if (this.#renewing || this.#closing !== undefined || this.#failure !== undefined) return;
    const held = [...this.#backends.values()].filter((b) => b.failure() === undefined);
    if (held.length === 0) return;
    this.#renewing = true;
    try {
      this.#renewals += 1;
      const renewed = await renewSessionLeases(
        this.#liveness,
        this.#identity,
        held.map((b) => ({ session: b.sessionKey, token: b.token })),
      );
      for (const backend of held) if (!renewed.has(backend.sessionKey)) backend.leaseLost();
    } catch (error) {
      this.#fail(error);
    } finally {
      this.#renewing = false;
    }
  }

  /**
   * Closes every session this host opened (each gives its lease up after
   * its last call), then drops the liveness lock and, for its own pool, the
   * pool. Later calls of those storages fail with `StorageClosed`.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    clearInterval(this.#renewal);
    const open = [...this.#sessions.values()].filter((s): s is PostgresStorage => s !== "opening");
    await Promise.allSettled(open.map((storage) => storage.close()));
    try {
      await this.#liveness.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [
        hostLockKey(this.schema, this.hostId),
      ]);
    } catch {
      // Destroying the connection below drops the lock all the same.
    } finally {
      // Destroyed, not returned to the pool: its session-level lock must not outlive the host.
      this.#liveness.release(true);
      if (this.#ownsPool) await this.pool.end();
    }
  }
}

/**
 * Opens a host: many sessions of one PostgreSQL database sharing at most
 * `maxConnections` connections. Runs the schema migrations if needed and
 * takes the host's liveness lock; `host.open(session)` then opens sessions.
 */
export function openPostgresHost(options: OpenPostgresHostOptions): Promise<PostgresHost> {
  return PostgresHost.start(options).catch((error: unknown) => {
    // Typed errors (a bad option, a foreign schema) pass through; a driver's becomes StorageIOError naming the server.
    const config =
      typeof options === "object" && options !== null
        ? (options.pool ?? { ...options.poolConfig, connectionString: options.connectionString })
        : undefined;
    throw ioFailure(error, serverOfConfig(config), "opening a host");
  });
}
