import { StorageLocked, StoragePoisoned } from "@durably/core";
import type {
  CommitCall,
  CommitOutcome,
  StorageBackend,
  StorageCapabilities,
} from "@durably/core/storage";
import type { Pool } from "pg";
import { CommitWriter } from "./commit-writer.js";
import { CallNotSent, type GroupCommitter } from "./group-commit.js";
import { releaseSessionLease, type SessionLease } from "./host-lease.js";
import { detail, isTyped } from "./open-errors.js";
import { PostgresReads } from "./postgres-reads.js";

/** What a session needs of the host that opened it. */
export interface SessionHost {
  readonly pool: Pool;
  readonly schema: string;
  readonly committer: GroupCommitter;
  /** Set once the host cannot vouch for its sessions (its liveness connection died). */
  failure(): Error | undefined;
  /** The session closed: the host forgets it (and a host of one closes itself). */
  closed(session: string): Promise<void>;
}

/**
 * The PostgreSQL backend of one session opened through a host, behind the
 * checked front. It holds no connection: reads use the host's pool, commits
 * are planned here and handed to the host's group committer, and the
 * host renews the lease together with its other sessions'.
 */
export class HostSessionBackend extends PostgresReads implements StorageBackend {
  readonly name: string;
  readonly capabilities: StorageCapabilities = { persistent: true };
  readonly freshReads = true;
  readonly sessionKey: string;
  readonly #host: SessionHost;
  readonly #lease: SessionLease;
  readonly #writer: CommitWriter;
  #nextId: number;
  /** Set once this session can no longer write safely: the lease was lost, or a write's outcome is unknown. */
  #broken: Error | undefined;

  constructor(host: SessionHost, session: string, lease: SessionLease) {
    super(host.pool, host.schema, session);
    this.name = `PostgreSQL storage of session ${JSON.stringify(session)}`;
    this.sessionKey = session;
    this.#host = host;
    this.#lease = lease;
    this.#writer = new CommitWriter(host.schema, session, lease.token, {
      nextSeq: lease.nextSeq,
      highWater: lease.highWater,
    });
    this.#nextId = Math.max(lease.highWater + 1, 2);
  }

  get token(): number {
    return this.#lease.token;
  }

  failure(): Error | undefined {
    return this.#broken ?? this.#host.failure();
  }

  /** Marks the session unusable: a write's outcome is unknown. */
  fail(cause: unknown): void {
    this.#broken ??= new StoragePoisoned(
      `the PostgreSQL storage of session ${JSON.stringify(this.sessionKey)} lost a connection or a write's outcome is unknown; close and reopen it`,
      { cause },
    );
  }

  /** The host's renewal found the token replaced: another owner took the session over. */
  leaseLost(): void {
    this.#broken ??= this.#writer.leaseLost();
  }

  mintId(): number {
    const id = this.#nextId;
    this.#nextId = id + 1;
    return id;
  }

  // The checked front runs one call at a time, so at most one call per session is in flight.
  async commit(call: CommitCall): Promise<CommitOutcome> {
    const failure = this.failure();
    if (failure !== undefined) throw failure;
    try {
      const prepared = await this.#writer.prepare(this.#host.pool, call, this.#nextId - 1);
      if (!("plans" in prepared)) return prepared;
      return await this.#host.committer.submit(this.#writer, prepared, (highWater) => {
        if (highWater >= this.#nextId) this.#nextId = highWater + 1;
      });
    } catch (error) {
      // Its round could not be built or had no connection: nothing was sent, the outcome is known.
      if (error instanceof CallNotSent) throw error.cause;
      // A fenced commit changed nothing, but this session may never write again;
      // any other failure leaves the outcome unknown.
      if (error instanceof StorageLocked) {
        this.#broken ??= error;
        throw error;
      }
      this.fail(error);
      // The call in flight gets a typed error too (the driver's as its cause), as every later call does.
      if (isTyped(error)) throw error;
      throw new StoragePoisoned(
        `the PostgreSQL storage of session ${JSON.stringify(this.sessionKey)}: a commit's outcome is unknown (${detail(error)}); close and reopen it to see whether it was stored`,
        { cause: error },
      );
    }
  }

  /** Gives the lease up (after the front let the last call settle). */
  async close(): Promise<void> {
    try {
      if (this.failure() === undefined)
        await releaseSessionLease(
          this.#host.pool,
          this.#host.schema,
          this.sessionKey,
          this.#lease.token,
        );
    } catch {
      // Nothing is lost: the lease expires, or the host's liveness lock drops when it closes.
    } finally {
      await this.#host.closed(this.sessionKey);
    }
  }
}
