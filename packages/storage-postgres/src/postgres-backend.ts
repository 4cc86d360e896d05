import { StorageLocked, StoragePoisoned } from "@durably/core";
import type {
  CommitCall,
  CommitOutcome,
  StorageBackend,
  StorageCapabilities,
} from "@durably/core/storage";
import type { Pool, PoolClient } from "pg";
import { CommitWriter } from "./commit-writer.js";
import { releaseLease, renewLease, type Lease } from "./lease.js";
import { PostgresReads } from "./postgres-reads.js";

export interface PostgresStorageSettings {
  /** Schema holding Durably's tables (created by the migrations). */
  schema: string;
  /** The session key: every row this storage reads or writes carries it. */
  session: string;
  /** Names this owner in the lease row and in `StorageLocked` messages. */
  owner: string;
  /** How long a lease lasts without renewal; renewed every third of it. */
  leaseMs: number;
  /** Close the pool on `close()` (it was created by `openPostgresStorage`). */
  ownsPool: boolean;
}

/**
 * The PostgreSQL backend of one session of a shared database, behind the
 * checked front. Commits and lease renewals run one after another on one
 * connection held for the backend's lifetime (it also holds the owner's
 * liveness lock); reads use the pool.
 */
export class PostgresBackend extends PostgresReads implements StorageBackend {
  readonly name: string;
  readonly capabilities: StorageCapabilities = { persistent: true };
  readonly freshReads = true;
  readonly #pool: Pool;
  readonly #client: PoolClient;
  readonly #settings: PostgresStorageSettings;
  readonly #lease: Lease;
  readonly #writer: CommitWriter;
  /** The owner connection's work (commits, renewals), one at a time. */
  #queue: Promise<unknown> = Promise.resolve();
  #nextId: number;
  #closed = false;
  /** Set once the storage can no longer write safely: the lease was lost, or a write's outcome is unknown. */
  #broken: Error | undefined;
  readonly #renewal: NodeJS.Timeout;

  constructor(pool: Pool, client: PoolClient, settings: PostgresStorageSettings, lease: Lease) {
    super(pool, settings.schema, settings.session);
    this.name = `PostgreSQL storage of session ${JSON.stringify(settings.session)}`;
    this.#pool = pool;
    this.#client = client;
    this.#settings = settings;
    this.#lease = lease;
    this.#writer = new CommitWriter(client, settings.schema, settings.session, lease.token, {
      nextSeq: lease.nextSeq,
      highWater: lease.highWater,
    });
    this.#nextId = Math.max(lease.highWater + 1, 2);
    this.#renewal = setInterval(
      () => this.#renew(),
      Math.max(50, Math.floor(settings.leaseMs / 3)),
    );
    this.#renewal.unref();
    client.on("error", (error) => this.fail(error));
  }

  failure(): Error | undefined {
    return this.#broken;
  }

  /** Marks the storage unusable: the connection died, or a write's outcome is unknown. */
  fail(cause: unknown): void {
    if (this.#broken !== undefined) return;
    this.#broken = new StoragePoisoned(
      `the PostgreSQL storage of session ${JSON.stringify(this.#settings.session)} lost its connection or a write's outcome is unknown; close and reopen it`,
      { cause },
    );
  }

  #renew(): void {
    if (this.#closed || this.#broken !== undefined) return;
    const run = this.#queue.then(async () => {
      if (this.#closed || this.#broken !== undefined) return;
      const held = await renewLease(this.#client, this.#settings, this.#lease);
      if (!held) this.#broken = this.#writer.leaseLost();
    });
    this.#queue = run.catch((error: unknown) => this.fail(error));
  }

  mintId(): number {
    const id = this.#nextId;
    this.#nextId = id + 1;
    return id;
  }

  commit(call: CommitCall): Promise<CommitOutcome> {
    const run = this.#queue.then(async () => {
      if (this.#broken !== undefined) throw this.#broken;
      try {
        return await this.#writer.commit(call, this.#nextId - 1, (highWater) => {
          if (highWater >= this.#nextId) this.#nextId = highWater + 1;
        });
      } catch (error) {
        // A fenced commit changed nothing, but this storage may never write again;
        // any other failure leaves the outcome unknown.
        if (error instanceof StorageLocked) this.#broken = error;
        else this.fail(error);
        throw error;
      }
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Gives the lease up and returns the owner connection, after the queued work. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#renewal);
    await this.#queue;
    try {
      if (this.#broken === undefined) await releaseLease(this.#client, this.#settings, this.#lease);
    } catch {
      // Nothing is lost: destroying the connection below frees the liveness lock,
      // so the next open takes the session over at once even with the lease row left.
    } finally {
      // Destroyed, not returned to the pool: its session-level advisory lock must not outlive us.
      this.#client.release(true);
      if (this.#settings.ownsPool) await this.#pool.end();
    }
  }
}
