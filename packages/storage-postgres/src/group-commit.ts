import type { CommitOutcome } from "@durably/core/storage";
import type { Pool, PoolClient } from "pg";
import { commitCallsSql } from "./commit-calls.js";
import { roundFenceSql } from "./commit-statements.js";
import type { CommitWriter, PreparedCommit } from "./commit-writer.js";
import { isStatementError } from "./queries.js";

/** Counts of what the committer sent, for `PostgresHost.stats()`. */
export interface GroupCommitStats {
  /** Transactions committed or attempted on the fast path (one round trip each). */
  rounds: number;
  /** Commit calls those rounds carried. */
  calls: number;
  /** Rounds replayed with a savepoint per session, after a statement of one failed. */
  replays: number;
  /** Rounds running now, and the most that ever ran at once. */
  running: number;
  maxRunning: number;
}

interface Job {
  readonly writer: CommitWriter;
  readonly prepared: PreparedCommit;
  /** The session key in UTF-8: rounds lock session rows in this (byte) order. */
  readonly order: Buffer;
  readonly adopt: (highWater: number) => void;
  readonly resolve: (outcome: CommitOutcome) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * A bound on the calls in one round, so one transaction's script (and a
 * replay's savepoints) stays bounded when thousands of sessions queue at once;
 * the rest go in the next round, possibly on another connection.
 */
const MAX_CALLS_PER_ROUND = 256;

/**
 * Cross-session group commit. Sessions hand it prepared calls (at most one
 * in flight per session: `CheckedStorage` runs a storage's calls one at a
 * time, which the per-session planning state relies on); whatever is queued
 * when a round can start goes into ONE transaction sent as one query: one
 * statement fencing every session of the round and storing its counters
 * (`fence_round`, updating their rows in session-key byte order), then
 * every call's statements, so a round of many sessions costs the server
 * one statement more than one session's call, not two per session, and
 * one row change per session instead of a lock and an update. Up to
 * `maxRounds` rounds run at once, each on its own pooled connection.
 *
 * When a statement fails, nothing of the round committed; it is replayed
 * with one savepoint per session, so a fenced or refused session fails (or
 * stores its batches before the refused one) alone while its neighbours'
 * calls commit. A failure that leaves the outcome unknown (the connection
 * died, COMMIT failed) rejects every call of the round.
 */
export class GroupCommitter {
  readonly #pool: Pool;
  readonly #maxRounds: number;
  readonly #schema: string;
  /** Set to send rounds as one statement with bound parameters, else as a literal script. */
  readonly #parameters: { sql: string } | undefined;
  #queue: Job[] = [];
  #scheduled = false;
  readonly #stats: GroupCommitStats = {
    rounds: 0,
    calls: 0,
    replays: 0,
    running: 0,
    maxRunning: 0,
  };

  constructor(pool: Pool, maxRounds: number, schema: string, parameterized: boolean) {
    this.#pool = pool;
    this.#maxRounds = maxRounds;
    this.#schema = schema;
    this.#parameters = parameterized ? { sql: commitCallsSql(schema) } : undefined;
  }

  stats(): GroupCommitStats {
    return { ...this.#stats };
  }

  submit(
    writer: CommitWriter,
    prepared: PreparedCommit,
    adopt: (highWater: number) => void,
  ): Promise<CommitOutcome> {
    return new Promise((resolve, reject) => {
      const order = Buffer.from(writer.session, "utf8");
      this.#queue.push({ writer, prepared, order, adopt, resolve, reject });
      // Started on the next turn, so calls submitted in the same turn share a round.
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#pump();
        });
      }
    });
  }

  #pump(): void {
    while (this.#stats.running < this.#maxRounds && this.#queue.length > 0) {
      const jobs = this.#queue.splice(0, MAX_CALLS_PER_ROUND);
      this.#stats.running += 1;
      this.#stats.maxRunning = Math.max(this.#stats.maxRunning, this.#stats.running);
      this.#round(jobs)
        // A bug must not leave calls hanging: every call not settled yet fails with it.
        .catch((error: unknown) => {
          for (const job of jobs) job.reject(error);
        })
        .finally(() => {
          this.#stats.running -= 1;
          this.#pump();
        });
    }
  }

  async #round(jobs: Job[]): Promise<void> {
    // One global order (UTF-8 bytes = COLLATE "C") for every transaction locking several
    // session rows, renewals included, so two of them never wait for each other in a cycle.
    jobs.sort((a, b) => Buffer.compare(a.order, b.order));
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    let broken = false;
    // A checked-out connection reports its death as an event; the failed query reports it too.
    const onError = () => void (broken = true);
    client.on("error", onError);
    try {
      this.#stats.rounds += 1;
      this.#stats.calls += jobs.length;
      try {
        if (this.#parameters !== undefined)
          // One statement, so one implicit transaction: all of it commits or none.
          await client.query(this.#parameters.sql, [
            JSON.stringify(jobs.map((j) => j.writer.call(j.prepared))),
          ]);
        else await client.query(this.#script(jobs));
      } catch (error) {
        await client.query("ROLLBACK").catch(() => void (broken = true));
        if (broken || !isStatementError(error)) {
          broken = true;
          for (const job of jobs) job.reject(error);
          return;
        }
        this.#stats.replays += 1;
        broken = !(await this.#replay(client, jobs));
        return;
      }
      for (const job of jobs) {
        const stored = job.prepared.plans.length;
        job.writer.committed(job.prepared, stored, job.adopt);
        job.resolve({ stored });
      }
    } finally {
      client.off("error", onError);
      // A connection in doubt is destroyed, never handed to the next user of the pool.
      client.release(broken ? true : undefined);
    }
  }

  /**
   * A round as one literal script: one statement fencing every session (in
   * the jobs' order, session-key byte order) and storing its counters, then
   * every call's statements.
   */
  #script(jobs: readonly Job[]): string {
    const statements = [
      "BEGIN",
      roundFenceSql(
        this.#schema,
        jobs.map((j) => j.writer.roundRow(j.prepared)),
      ),
    ];
    for (const j of jobs) for (const s of j.writer.statements(j.prepared)) statements.push(s);
    statements.push("COMMIT");
    return statements.join(";\n");
  }

  /**
   * The round again, each session inside its own savepoint. Returns false
   * when the connection can no longer be trusted.
   */
  async #replay(client: PoolClient, jobs: readonly Job[]): Promise<boolean> {
    const results: ({ outcome: CommitOutcome } | { error: unknown })[] = [];
    try {
      await client.query("BEGIN");
      for (const job of jobs) {
        await client.query("SAVEPOINT durably_session");
        try {
          const outcome = await job.writer.replay(client, job.prepared);
          await client.query("RELEASE SAVEPOINT durably_session");
          results.push({ outcome });
        } catch (error) {
          // Only this session's statements failed: undo them, and let the neighbours go on.
          if (!isStatementError(error)) throw error;
          await client.query("ROLLBACK TO SAVEPOINT durably_session");
          results.push({ error: job.writer.explain(error) });
        }
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      for (const job of jobs) job.reject(error);
      return false;
    }
    jobs.forEach((job, i) => {
      const result = results[i] as { outcome: CommitOutcome } | { error: unknown };
      if ("error" in result) return job.reject(result.error);
      job.writer.committed(job.prepared, result.outcome.stored, job.adopt);
      job.resolve(result.outcome);
    });
    return true;
  }
}
