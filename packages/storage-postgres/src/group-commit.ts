import type { CommitOutcome } from "@durably/core/storage";
import type { Pool, PoolClient } from "pg";
import { commitCallsSql } from "./commit-calls.js";
import { roundFenceSql, type RoundRow } from "./commit-statements.js";
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

/** A call's part of a round's text, built once, when the call is taken into a round. */
interface BuiltCall {
  /** Its statements joined (literal scripts), or its element of the `commit_calls` argument (JSON). */
  readonly text: string;
  /** Its row of the round's `fence_round` statement (literal scripts only). */
  readonly row: RoundRow | undefined;
  /** What it adds to the round, in UTF-8 bytes of what is sent (`text`, its row, separators). */
  readonly bytes: number;
}

interface Job {
  readonly writer: CommitWriter;
  readonly prepared: PreparedCommit;
  /** The session key in UTF-8: rounds lock session rows in this (byte) order. */
  readonly order: Buffer;
  readonly adopt: (highWater: number) => void;
  readonly resolve: (outcome: CommitOutcome) => void;
  readonly reject: (error: unknown) => void;
  /** Set when measured for a round; kept when it did not fit, for the next round. */
  built?: BuiltCall;
}

/**
 * A call rejected with this never reached the server: its round (or its own
 * part of one) could not be built, or no connection could be had. Nothing
 * of it is stored, so the session is not poisoned: it throws `cause`.
 */
export class CallNotSent {
  readonly cause: unknown;
  constructor(cause: unknown) {
    this.cause = cause;
  }
}

/**
 * A bound on the calls in one round, so one transaction's script (and a
 * replay's savepoints) stays bounded when thousands of sessions queue at once;
 * the rest go in the next round, possibly on another connection.
 */
const MAX_CALLS_PER_ROUND = 256;

/**
 * A bound on the size of one round, in UTF-8 bytes of what is sent: the
 * literal script (the query), or the JSON of the calls (the bound
 * parameter). A call that would take the round past it goes into the next
 * round; the first call of a round always goes, whatever its size.
 *
 * 128 MiB, because a round is built as ONE JavaScript string (at most
 * 2^29 - 24, about 512 Mi, UTF-16 code units, never more than its UTF-8
 * bytes), and PostgreSQL takes at most 1 GiB - 1 bytes in one message and
 * keeps a parsed copy of a script's literals next to its text; with
 * parameterized rounds the calls become ONE jsonb value, which holds at
 * most 256 MiB (strings unescaped, so no more than their JSON text, but
 * numbers and arrays take more than theirs: half leaves room; a round the
 * server still finds too large fails as a statement and is replayed call
 * by call with literal scripts, like a refused one). It is also about what
 * one call can already take on its own: core caps a commit at 64 MiB of
 * JSON (`MAX_COMMIT_BYTES`, UTF-8 bytes, at least 256 per table write),
 * and quoting at most doubles it (`'` and `\` doubled in a literal; `"`
 * and `\` escaped once more in the call's JSON, where JSON already escaped
 * every control character), plus a few hundred bytes of SQL (and the
 * session key) per row change: about 128 MiB at most for the values. So a
 * round of several calls is no larger than one call may already be, and one
 * call alone (always taken) stays well under both limits; only a
 * pathological one (hundreds of thousands of tiny row changes, each
 * repeating a very long session key) could come near them, and one that
 * cannot be built, or is past `MAX_SENT_BYTES`, is refused before anything
 * is sent (`CallNotSent`), never half-sent.
 */
const MAX_ROUND_BYTES = 128 * 1024 * 1024;

/**
 * PostgreSQL reads at most 1 GiB - 1 bytes as one message and closes the
 * connection on a longer one (an outcome the client could not tell from a
 * lost commit); a call whose text alone comes within 1 MiB of that (the
 * round's other text: its fence statement of at most 256 rows, BEGIN,
 * COMMIT, framing) is refused before sending.
 */
const MAX_SENT_BYTES = 0x3fff_ffff - 1024 * 1024;

/** Room for a literal round's separators and a call's numbers in the fence statement. */
const ROW_BYTES = 128;

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
  /** UTF-8 bytes of text a round of several calls stays within (lowered by tests only). */
  readonly #maxRoundBytes: number;
  #queue: Job[] = [];
  #scheduled = false;
  readonly #stats: GroupCommitStats = {
    rounds: 0,
    calls: 0,
    replays: 0,
    running: 0,
    maxRunning: 0,
  };

  constructor(
    pool: Pool,
    maxRounds: number,
    schema: string,
    parameterized: boolean,
    maxRoundBytes = MAX_ROUND_BYTES,
  ) {
    this.#pool = pool;
    this.#maxRounds = maxRounds;
    this.#schema = schema;
    this.#parameters = parameterized ? { sql: commitCallsSql(schema) } : undefined;
    this.#maxRoundBytes = maxRoundBytes;
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
      const jobs = this.#take();
      if (jobs.length === 0) continue;
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

  /**
   * Takes the next round's calls off the queue, in queue order: up to
   * `MAX_CALLS_PER_ROUND`, and while their text stays within the round's
   * byte bound (the first one always). Each call's text is built here,
   * once, and measured as it is appended; the call that does not fit keeps
   * its text for the next round. A call whose text cannot be built fails
   * alone, before anything is sent.
   */
  #take(): Job[] {
    const queue = this.#queue;
    const jobs: Job[] = [];
    let bytes = 0;
    let taken = 0;
    while (taken < queue.length && jobs.length < MAX_CALLS_PER_ROUND) {
      const job = queue[taken] as Job;
      let built: BuiltCall;
      try {
        built = job.built ??= this.#build(job);
      } catch (error) {
        taken += 1;
        job.reject(new CallNotSent(error));
        continue;
      }
      if (jobs.length > 0 && bytes + built.bytes > this.#maxRoundBytes) break;
      taken += 1;
      jobs.push(job);
      bytes += built.bytes;
    }
    queue.splice(0, taken);
    return jobs;
  }

  /** A call's part of a round, measured in UTF-8 bytes (a scan of the text, not a second serialisation). */
  #build(job: Job): BuiltCall {
    const { writer, prepared } = job;
    let built: BuiltCall;
    if (this.#parameters !== undefined) {
      const text = JSON.stringify(writer.call(prepared));
      // The element and its comma.
      built = { text, row: undefined, bytes: Buffer.byteLength(text, "utf8") + 1 };
    } else {
      const text = writer.statements(prepared).join(";\n");
      const row = writer.roundRow(prepared);
      built = {
        text,
        row,
        bytes: Buffer.byteLength(text, "utf8") + Buffer.byteLength(row.key, "utf8") + ROW_BYTES,
      };
    }
    if (built.bytes > MAX_SENT_BYTES)
      throw new RangeError(
        `session ${JSON.stringify(writer.session)}: this commit call's SQL would take ${built.bytes} bytes, over the ${MAX_SENT_BYTES} bytes PostgreSQL takes in one message; nothing was sent`,
      );
    return built;
  }

  async #round(jobs: Job[]): Promise<void> {
    // One global order (UTF-8 bytes = COLLATE "C") for every transaction locking several
    // session rows, renewals included, so two of them never wait for each other in a cycle.
    jobs.sort((a, b) => Buffer.compare(a.order, b.order));
    // Built before a connection is taken: a failure here sent nothing.
    let text: string;
    try {
      text = this.#parameters !== undefined ? this.#argument(jobs) : this.#script(jobs);
    } catch (error) {
      for (const job of jobs) job.reject(new CallNotSent(error));
      return;
    } finally {
      // The round's text holds them now (a replay builds its own statements).
      for (const job of jobs) job.built = undefined;
    }
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      // No connection, nothing sent.
      for (const job of jobs) job.reject(new CallNotSent(error));
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
          await client.query(this.#parameters.sql, [text]);
        else await client.query(text);
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
    const built = jobs.map((j) => j.built as BuiltCall);
    const statements = [
      "BEGIN",
      roundFenceSql(
        this.#schema,
        built.map((b) => b.row as RoundRow),
      ),
    ];
    for (const b of built) if (b.text !== "") statements.push(b.text);
    statements.push("COMMIT");
    return statements.join(";\n");
  }

  /** A parameterized round's argument: the calls' JSON, the same text as `JSON.stringify` of them all. */
  #argument(jobs: readonly Job[]): string {
    return `[${jobs.map((j) => (j.built as BuiltCall).text).join(",")}]`;
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
