import { StorageLocked, type StorageWrite } from "@durably/core";
import {
  isHistoryKept,
  type BatchPlan,
  type CommitCall,
  type CommitOutcome,
  type CurrentValue,
  type PlanNeeds,
  type PlanView,
  type WriteConflict,
} from "@durably/core/storage";
import type { PoolClient } from "pg";
import { identifyConflict } from "./commit-conflicts.js";
import type { CallArgument } from "./commit-calls.js";
import { batchOps, type CommitOp } from "./commit-ops.js";
import { StatementBuilder, type RoundRow } from "./commit-statements.js";
import { loadDocuments, materialize } from "./documents.js";
import { KnownState, rowState, type DocumentState } from "./known-state.js";
import { constraintOf, FENCED, query, sqlState, UNIQUE_VIOLATION, type Runner } from "./queries.js";
import { literal } from "./sql-literals.js";

/** How far past the highest used id the stored high-water mark is set, so it is rewritten about once per this many ids. */
export const ID_RESERVATION = 1024;

export interface Counters {
  nextSeq: number;
  /** The id high-water mark stored in the session row. */
  highWater: number;
}

/** A call planned and turned into SQL, waiting for its place in a group-commit round. */
export interface PreparedCommit {
  readonly plans: readonly BatchPlan[];
  /** Each batch's row changes. */
  readonly ops: readonly CommitOp[][];
  readonly batches: CommitCall["batches"];
  readonly view: PlanView;
  readonly mintedHighWater: number;
}

/**
 * The commit calls of one session: plans a call against what this storage
 * knows plus at most a few lookups, and turns it into SQL that a
 * group-commit round runs inside its transaction, next to other sessions'
 * calls: its row of the round's fence (which also stores its counters),
 * every batch's statements. Only when
 * a statement fails is the call replayed batch by batch with savepoints, to
 * store the batches before the one that broke it and name it. The writer
 * never sends anything itself except lookups: the round owns the
 * connection and the transaction, and tells the writer what committed.
 */
export class CommitWriter {
  readonly #schema: string;
  readonly #session: string;
  readonly #token: number;
  readonly #builder: StatementBuilder;
  readonly #known = new KnownState();
  #counters: Counters;
  readonly #fence: string;
  /** The session key as a SQL literal. */
  readonly #key: string;

  constructor(schema: string, session: string, token: number, counters: Counters) {
    this.#schema = schema;
    this.#session = session;
    this.#token = token;
    this.#counters = counters;
    this.#builder = new StatementBuilder(schema, session);
    this.#key = literal(session);
    this.#fence = `SELECT ${schema}.fence(${this.#key}, ${literal(token)})`;
  }

  get session(): string {
    return this.#session;
  }

  leaseLost(): StorageLocked {
    return new StorageLocked(
      `session ${JSON.stringify(this.#session)}: the lease (token ${this.#token}) was taken over by another owner; this storage can no longer write. Close it; the new owner has the session.`,
    );
  }

  /**
   * Plans `call` (reading on `reader` what it needs) and builds its SQL, or
   * answers at once when there is nothing to store. `mintedHighWater` is the
   * highest id handed out by `mintId`, so the stored mark covers ids minted
   * but not yet written.
   */
  async prepare(
    reader: Runner,
    call: CommitCall,
    mintedHighWater: number,
  ): Promise<PreparedCommit | CommitOutcome> {
    if (call.batches.length === 0) return { stored: 0 };
    const view = await this.#prefetch(reader, call.needs());
    const plans = call.plan(view, this.#counters.nextSeq);
    if (plans.length === 0) return { stored: 0 };
    const ops = plans.map(batchOps);
    return { plans, ops, batches: call.batches, view, mintedHighWater };
  }

  /**
   * The statements storing every batch of `p`, for a round's transaction,
   * which fences its sessions and stores their counters in one statement
   * (`roundRow`) before every session's statements.
   */
  statements(p: PreparedCommit): string[] {
    return this.#builder.build(p.ops.flat());
  }

  /** This session's values in a round's fence statement (`roundFenceSql`), every batch of `p` stored. */
  roundRow(p: PreparedCommit): RoundRow {
    const next = this.#nextCounters(p.plans, p.plans.length, p.mintedHighWater);
    return {
      key: this.#key,
      token: this.#token,
      nextSeq: next.nextSeq,
      highWater: this.#markToStore(next),
    };
  }

  /** Every batch of `p` as one element of the `commit_calls` function's argument (see commit-calls.ts). */
  call(p: PreparedCommit): CallArgument {
    const next = this.#nextCounters(p.plans, p.plans.length, p.mintedHighWater);
    return {
      k: this.#session,
      t: this.#token,
      n: next.nextSeq,
      h: this.#markToStore(next),
      o: p.ops.flat(),
    };
  }

  /** Records what a committed round stored of `p`; `adopt` learns each stored batch's highest id. */
  committed(p: PreparedCommit, stored: number, adopt: (highWater: number) => void): void {
    // Nothing stored, nothing written: not even the counters (the high-water mark stays as stored).
    if (stored === 0) return;
    this.#counters = this.#nextCounters(p.plans, stored, p.mintedHighWater);
    for (let i = 0; i < stored; i++) {
      const plan = p.plans[i] as BatchPlan;
      for (const w of plan.writes)
        if (w.type === "conversation") this.#known.addConversation(w.value.id);
      this.#known.documents.adopt(plan, (id) => p.view.document(id));
      adopt(plan.highestId);
    }
  }

  /** The counters once `stored` batches of `plans` are stored. */
  #nextCounters(plans: readonly BatchPlan[], stored: number, mintedHighWater: number): Counters {
    const nextSeq = this.#counters.nextSeq + stored;
    let highest = mintedHighWater;
    for (let i = 0; i < stored; i++) highest = Math.max(highest, (plans[i] as BatchPlan).highestId);
    // Reserve ahead, so most commits leave the high-water mark alone; ids skipped after a reopen are fine.
    const highWater =
      highest > this.#counters.highWater ? highest + ID_RESERVATION : this.#counters.highWater;
    return { nextSeq, highWater };
  }

  /** The high-water mark to store with `next`, or null when it leaves the stored one as it is. */
  #markToStore(next: Counters): number | null {
    return next.highWater !== this.#counters.highWater ? next.highWater : null;
  }

  /** The counters statement of the replay path (the fast path stores them in the round's fence). */
  #counterSql(next: Counters): string {
    const mark = this.#markToStore(next);
    return `UPDATE ${this.#schema}.sessions SET next_seq = ${next.nextSeq}${
      mark === null ? "" : `, high_water = ${mark}`
    } WHERE session_key = ${this.#key}`;
  }

  /**
   * The slow path, inside the round's open transaction: the fence, then one
   * savepoint per batch, so a unique violation names its batch and spares
   * the earlier ones. Any other failure, the fence's included, is thrown:
   * the round then rolls this session back to its own savepoint.
   */
  async replay(client: PoolClient, p: PreparedCommit): Promise<CommitOutcome> {
    await client.query(this.#fence);
    for (let i = 0; i < p.plans.length; i++) {
      try {
        await client.query(
          [
            "SAVEPOINT durably_batch",
            ...this.#builder.build(p.ops[i] as CommitOp[]),
            "RELEASE SAVEPOINT durably_batch",
          ].join(";\n"),
        );
      } catch (error) {
        if (sqlState(error) !== UNIQUE_VIOLATION) throw error;
        await client.query("ROLLBACK TO SAVEPOINT durably_batch");
        const conflict: WriteConflict | undefined = await identifyConflict(
          client,
          this.#schema,
          this.#session,
          i,
          p.batches[i] as readonly StorageWrite[],
          constraintOf(error),
        );
        if (conflict === undefined) throw error;
        if (i === 0) return { stored: 0, conflict };
        await client.query(this.#counterSql(this.#nextCounters(p.plans, i, p.mintedHighWater)));
        return { stored: i, conflict };
      }
    }
    // Every batch went in this time (a neighbour broke the fast path, or nothing else writes this session).
    await client.query(
      this.#counterSql(this.#nextCounters(p.plans, p.plans.length, p.mintedHighWater)),
    );
    return { stored: p.plans.length };
  }

  /** A fence failure as this session's `StorageLocked`; anything else as it is. */
  explain(error: unknown): unknown {
    return sqlState(error) === FENCED ? this.leaseLost() : error;
  }

  /**
   * Looks up, in a few queries, what planning asks and this storage does not
   * already know: conversations the writes name, current documents they
   * change, retire or copy, and past values of copies at a seq. Nothing else
   * writes the session, so the answers stay true until this call commits.
   * Ids and addresses the writes create are answered from what is known:
   * the unique indexes catch the rest.
   */
  async #prefetch(reader: Runner, needs: PlanNeeds): Promise<PlanView> {
    const known = this.#known;
    const missingConversations = [...needs.conversations].filter(
      (id) => !known.hasConversation(id),
    );
    const missingDocuments = [...needs.documents].filter(
      (id) => known.documents.get(id) === undefined,
    );
    if (missingConversations.length > 0) {
      const found = await query<{ id: number }>(
        reader,
        `SELECT id FROM ${this.#schema}.conversations WHERE session_key = $1 AND id = ANY($2::bigint[])`,
        [this.#session, missingConversations],
      );
      for (const { id } of found.rows) known.addConversation(id);
    }
    const loaded = new Map<number, DocumentState>();
    if (missingDocuments.length > 0)
      for (const [id, doc] of await loadDocuments(
        reader,
        this.#schema,
        this.#session,
        missingDocuments,
        "current",
      )) {
        const live = doc.row.retired_at === null;
        const state = rowState(doc.row, live ? materialize(this.#session, doc) : undefined);
        if (state.current !== undefined) {
          // Loaded at "current": the revisions run from the newest base to the newest one.
          const lastSeq = doc.revisions.at(-1)?.seq ?? state.newestBaseSeq;
          known.documents.set(id, {
            ...state,
            retiredAt: undefined,
            current: state.current,
            lastSeq,
          });
        }
        loaded.set(id, state);
      }
    const history = new Map<string, CurrentValue>();
    for (const { id, at } of needs.history) {
      const doc = (await loadDocuments(reader, this.#schema, this.#session, [id], at)).get(id);
      if (doc === undefined) continue;
      const state = loaded.get(id) ?? rowState(doc.row);
      loaded.set(id, known.documents.get(id) ?? state);
      // Only history that is kept: the planner refuses the other copies from the state alone.
      if (isHistoryKept(state, at)) history.set(`${id}@${at}`, materialize(this.#session, doc));
    }
    const lastSeq = this.#counters.nextSeq - 1;
    return {
      lastSeq,
      hasConversation: (id) => known.hasConversation(id),
      hasEntry: () => false,
      document: (id) => known.documents.get(id) ?? loaded.get(id),
      current: (id) => (known.documents.get(id) ?? loaded.get(id))?.current as CurrentValue,
      liveAt: () => undefined,
      valueAt: (id, at) => history.get(`${id}@${at}`) as CurrentValue,
    };
  }
}
