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
import { StatementBuilder } from "./commit-statements.js";
import { loadDocuments, materialize } from "./documents.js";
import { KnownState, rowState, type DocumentState } from "./known-state.js";
import { constraintOf, FENCED, query, sqlState, UNIQUE_VIOLATION } from "./queries.js";
import { literal } from "./sql-literals.js";

/** How far past the highest used id the stored high-water mark is set, so it is rewritten about once per this many ids. */
export const ID_RESERVATION = 1024;

export interface Counters {
  nextSeq: number;
  /** The id high-water mark stored in the session row. */
  highWater: number;
}

/**
 * Runs the commit calls of one session on its owner connection. A call is
 * planned against what this storage knows plus at most a few lookups, then
 * sent as one transaction in one query in the common case: `BEGIN`, the
 * fence check, every batch's statements, the counters, `COMMIT`. Only when a
 * unique index rejects a statement is the call replayed batch by batch with
 * savepoints, to store the batches before the one that broke it and name it.
 */
export class CommitWriter {
  readonly #client: PoolClient;
  readonly #schema: string;
  readonly #session: string;
  readonly #token: number;
  readonly #builder: StatementBuilder;
  readonly #known = new KnownState();
  #counters: Counters;
  readonly #fence: string;

  constructor(
    client: PoolClient,
    schema: string,
    session: string,
    token: number,
    counters: Counters,
  ) {
    this.#client = client;
    this.#schema = schema;
    this.#session = session;
    this.#token = token;
    this.#counters = counters;
    this.#builder = new StatementBuilder(schema, session);
    this.#fence = `SELECT ${schema}.fence(${literal(session)}, ${literal(token)})`;
  }

  leaseLost(): StorageLocked {
    return new StorageLocked(
      `session ${JSON.stringify(this.#session)}: the lease (token ${this.#token}) was taken over by another owner; this storage can no longer write. Close it; the new owner has the session.`,
    );
  }

  /**
   * `mintedHighWater`: the highest id handed out by `mintId`, so the stored
   * mark covers ids minted but not yet written. `adopt` learns the highest id
   * the call wrote.
   */
  async commit(
    call: CommitCall,
    mintedHighWater: number,
    adopt: (highWater: number) => void,
  ): Promise<CommitOutcome> {
    if (call.batches.length === 0) return { stored: 0 };
    const view = await this.#prefetch(call.needs());
    const plans = call.plan(view, this.#counters.nextSeq);
    if (plans.length === 0) return { stored: 0 };
    const statements = plans.map((plan) => this.#builder.build(plan));
    const outcome = await this.#run(plans, statements, call.batches, mintedHighWater);
    for (let i = 0; i < outcome.stored; i++) {
      const plan = plans[i] as BatchPlan;
      for (const w of plan.writes)
        if (w.type === "conversation") this.#known.addConversation(w.value.id);
      this.#known.documents.adopt(plan, (id) => view.document(id));
      adopt(plan.highestId);
    }
    return outcome;
  }

  /** The counters statement for `stored` batches. */
  #counterUpdate(
    plans: readonly BatchPlan[],
    stored: number,
    mintedHighWater: number,
  ): { sql: string; next: Counters } {
    const nextSeq = this.#counters.nextSeq + stored;
    let highest = mintedHighWater;
    for (let i = 0; i < stored; i++) highest = Math.max(highest, (plans[i] as BatchPlan).highestId);
    // Reserve ahead, so most commits leave the high-water mark alone; ids skipped after a reopen are fine.
    const highWater =
      highest > this.#counters.highWater ? highest + ID_RESERVATION : this.#counters.highWater;
    const sql = `UPDATE ${this.#schema}.sessions SET next_seq = ${nextSeq}${
      highWater !== this.#counters.highWater ? `, high_water = ${highWater}` : ""
    } WHERE session_key = ${literal(this.#session)}`;
    return { sql, next: { nextSeq, highWater } };
  }

  async #run(
    plans: readonly BatchPlan[],
    statements: readonly string[][],
    batches: CommitCall["batches"],
    mintedHighWater: number,
  ): Promise<CommitOutcome> {
    const counters = this.#counterUpdate(plans, plans.length, mintedHighWater);
    const script = ["BEGIN", this.#fence, ...statements.flat(), counters.sql, "COMMIT"].join(";\n");
    try {
      await this.#client.query(script);
      this.#counters = counters.next;
      return { stored: plans.length };
    } catch (error) {
      await this.#rollback();
      if (sqlState(error) !== UNIQUE_VIOLATION) throw this.#explain(error);
    }
    return this.#replay(plans, statements, batches, mintedHighWater);
  }

  /** The slow path: one savepoint per batch, so a unique violation names its batch and spares the earlier ones. */
  async #replay(
    plans: readonly BatchPlan[],
    statements: readonly string[][],
    batches: CommitCall["batches"],
    mintedHighWater: number,
  ): Promise<CommitOutcome> {
    const client = this.#client;
    try {
      await client.query(`BEGIN;\n${this.#fence}`);
      for (let i = 0; i < plans.length; i++) {
        try {
          await client.query(
            [
              "SAVEPOINT durably_batch",
              ...(statements[i] as string[]),
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
            batches[i] as readonly StorageWrite[],
            constraintOf(error),
          );
          if (conflict === undefined) throw error;
          if (i === 0) {
            await client.query("ROLLBACK");
            return { stored: 0, conflict };
          }
          const counters = this.#counterUpdate(plans, i, mintedHighWater);
          await client.query(`${counters.sql};\nCOMMIT`);
          this.#counters = counters.next;
          return { stored: i, conflict };
        }
      }
      // Every batch went in this time (nothing else writes this session): store them all.
      const counters = this.#counterUpdate(plans, plans.length, mintedHighWater);
      await client.query(`${counters.sql};\nCOMMIT`);
      this.#counters = counters.next;
      return { stored: plans.length };
    } catch (error) {
      await this.#rollback();
      throw this.#explain(error);
    }
  }

  async #rollback(): Promise<void> {
    // A dead connection cannot roll back; the server then drops what it had not committed,
    // and whether it committed is unknowable from here. The caller fails the storage either way.
    await this.#client.query("ROLLBACK").catch(() => undefined);
  }

  #explain(error: unknown): unknown {
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
  async #prefetch(needs: PlanNeeds): Promise<PlanView> {
    const known = this.#known;
    const missingConversations = [...needs.conversations].filter(
      (id) => !known.hasConversation(id),
    );
    const missingDocuments = [...needs.documents].filter(
      (id) => known.documents.get(id) === undefined,
    );
    if (missingConversations.length > 0) {
      const found = await query<{ id: number }>(
        this.#client,
        `SELECT id FROM ${this.#schema}.conversations WHERE session_key = $1 AND id = ANY($2::bigint[])`,
        [this.#session, missingConversations],
      );
      for (const { id } of found.rows) known.addConversation(id);
    }
    const loaded = new Map<number, DocumentState>();
    if (missingDocuments.length > 0)
      for (const [id, doc] of await loadDocuments(
        this.#client,
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
      const doc = (await loadDocuments(this.#client, this.#schema, this.#session, [id], at)).get(
        id,
      );
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
