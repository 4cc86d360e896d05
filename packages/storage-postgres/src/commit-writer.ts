import {
  StorageLocked,
  type Batch,
  type BatchRefused,
  type CommitResult,
  type Json,
  type Seq,
  type StorageWrite,
} from "@durably/core";
import { refuse } from "@durably/core/storage";
import type { PoolClient } from "pg";
import { identifyConflict } from "./commit-conflicts.js";
import { checkBatch, type CheckedBatch } from "./commit-plan.js";
import {
  historicalValue,
  StatementBuilder,
  type BatchStatements,
  type StateSource,
} from "./commit-statements.js";
import { loadDocuments, materialize } from "./documents.js";
import { KnownState, type DocumentState } from "./known-state.js";
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
 * one transaction sent as one query in the common case: `BEGIN`, the fence
 * check, every batch's statements, the counters, `COMMIT`. Only when a unique
 * index rejects a statement is the call replayed batch by batch with
 * savepoints, to store the batches before the refused one and name it.
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

  check(batches: readonly Batch[]): CheckedBatch[] {
    return batches.map((batch, i) => checkBatch(batch, i));
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
    batches: readonly CheckedBatch[],
    receive: (index: number, seq: Seq) => void,
    mintedHighWater: number,
    adopt: (highWater: number) => void,
  ): Promise<CommitResult> {
    const source = await this.#prefetch(batches);
    const firstSeq = this.#counters.nextSeq;
    const { built, refused } = await this.#builder.build(batches, firstSeq, source);
    let refusal: BatchRefused | undefined = refused
      ? refuse(refused.index, refused.problem)
      : undefined;
    let stored = built.length;
    if (stored > 0) {
      const outcome = await this.#run(built, batches, mintedHighWater);
      if (outcome.refused !== undefined) {
        stored = outcome.stored;
        refusal = outcome.refused;
      }
    }
    for (let i = 0; i < stored; i++) {
      const batch = built[i] as BatchStatements;
      for (const [id, state] of batch.documents) this.#known.setDocument(id, state);
      for (const id of batch.conversations) this.#known.addConversation(id);
      adopt(batch.highestId);
    }
    for (let i = 0; i < stored; i++) receive(i, (firstSeq + i) as Seq);
    return refusal === undefined ? { stored } : { stored, refused: refusal };
  }

  /** The counters statement for `stored` batches, or nothing when they did not move. */
  #counterUpdate(
    built: readonly BatchStatements[],
    stored: number,
    mintedHighWater: number,
  ): { sql: string; next: Counters } {
    const nextSeq = this.#counters.nextSeq + stored;
    let highest = mintedHighWater;
    for (let i = 0; i < stored; i++)
      highest = Math.max(highest, (built[i] as BatchStatements).highestId);
    // Reserve ahead, so most commits leave the high-water mark alone; ids skipped after a reopen are fine.
    const highWater =
      highest > this.#counters.highWater ? highest + ID_RESERVATION : this.#counters.highWater;
    const sql = `UPDATE ${this.#schema}.sessions SET next_seq = ${nextSeq}${
      highWater !== this.#counters.highWater ? `, high_water = ${highWater}` : ""
    } WHERE session_key = ${literal(this.#session)}`;
    return { sql, next: { nextSeq, highWater } };
  }

  async #run(
    built: readonly BatchStatements[],
    batches: readonly CheckedBatch[],
    mintedHighWater: number,
  ): Promise<{ stored: number; refused?: BatchRefused }> {
    const counters = this.#counterUpdate(built, built.length, mintedHighWater);
    const script = [
      "BEGIN",
      this.#fence,
      ...built.flatMap((b) => b.statements),
      counters.sql,
      "COMMIT",
    ].join(";\n");
    try {
      await this.#client.query(script);
      this.#counters = counters.next;
      return { stored: built.length };
    } catch (error) {
      await this.#rollback();
      if (sqlState(error) !== UNIQUE_VIOLATION) throw this.#explain(error);
    }
    return this.#replay(built, batches, mintedHighWater);
  }

  /** The slow path: one savepoint per batch, so a unique violation names its batch and spares the earlier ones. */
  async #replay(
    built: readonly BatchStatements[],
    batches: readonly CheckedBatch[],
    mintedHighWater: number,
  ): Promise<{ stored: number; refused?: BatchRefused }> {
    const client = this.#client;
    try {
      await client.query(`BEGIN;\n${this.#fence}`);
      for (let i = 0; i < built.length; i++) {
        const statements = (built[i] as BatchStatements).statements;
        try {
          await client.query(
            ["SAVEPOINT durably_batch", ...statements, "RELEASE SAVEPOINT durably_batch"].join(
              ";\n",
            ),
          );
        } catch (error) {
          if (sqlState(error) !== UNIQUE_VIOLATION) throw error;
          await client.query("ROLLBACK TO SAVEPOINT durably_batch");
          const writes = (batches[i] as { writes: StorageWrite[] }).writes;
          const problem = await identifyConflict(
            client,
            this.#schema,
            this.#session,
            writes,
            constraintOf(error),
          );
          if (problem === undefined) throw error;
          const refused = refuse(i, problem);
          if (i === 0) {
            await client.query("ROLLBACK");
            return { stored: 0, refused };
          }
          const counters = this.#counterUpdate(built, i, mintedHighWater);
          await client.query(`${counters.sql};\nCOMMIT`);
          this.#counters = counters.next;
          return { stored: i, refused };
        }
      }
      // Every batch went in this time (nothing else writes this session): store them all.
      const counters = this.#counterUpdate(built, built.length, mintedHighWater);
      await client.query(`${counters.sql};\nCOMMIT`);
      this.#counters = counters.next;
      return { stored: built.length };
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
   * Looks up, in at most two queries, what the call's writes need and this
   * storage does not already know: conversations they name and current
   * documents they change, retire or copy. Nothing else writes the session,
   * so the answers stay true until this call commits.
   */
  async #prefetch(batches: readonly CheckedBatch[]): Promise<StateSource> {
    const conversationIds = new Set<number>();
    const documentIds = new Set<number>();
    for (const batch of batches) {
      if ("problem" in batch) break;
      for (const w of batch.writes) {
        switch (w.type) {
          case "conversation":
            // A duplicate id is left to the primary key: new ids would cost a lookup each.
            if (w.value.parent) conversationIds.add(w.value.parent.conversationId);
            break;
          case "entry":
          case "task":
          case "submission":
            conversationIds.add(w.value.conversationId);
            break;
          case "document.change":
          case "document.retire":
            documentIds.add(w.id);
            break;
          case "document.copy":
            if (w.source.at === "current") documentIds.add(w.source.id);
            break;
        }
      }
    }
    const known = this.#known;
    const missingConversations = [...conversationIds].filter((id) => !known.hasConversation(id));
    const missingDocuments = [...documentIds].filter((id) => known.document(id) === undefined);
    const foundConversations = new Set<number>();
    if (missingConversations.length > 0) {
      const found = await query<{ id: number }>(
        this.#client,
        `SELECT id FROM ${this.#schema}.conversations WHERE session_key = $1 AND id = ANY($2::bigint[])`,
        [this.#session, missingConversations],
      );
      for (const { id } of found.rows) {
        foundConversations.add(id);
        known.addConversation(id);
      }
    }
    const loadedDocuments = new Map<number, DocumentState>();
    if (missingDocuments.length > 0) {
      const loaded = await loadDocuments(
        this.#client,
        this.#schema,
        this.#session,
        missingDocuments,
        "current",
      );
      for (const [id, doc] of loaded) {
        const { row } = doc;
        const state: DocumentState = {
          version: row.version,
          rewindable: row.rewindable,
          retiredAt: row.retired_at,
        };
        if (row.retired_at === null) {
          state.current = materialize(this.#session, doc, "current");
          known.setDocument(id, state);
        }
        loadedDocuments.set(id, state);
      }
    }
    const session = this.#session;
    const client = this.#client;
    const schema = this.#schema;
    return {
      conversationExists: (id) => known.hasConversation(id) || foundConversations.has(id),
      document: (id) => known.document(id) ?? loadedDocuments.get(id),
      documentAt: async (
        id: number,
        at: number,
      ): Promise<{ version: number; value: Json } | string> => {
        const loaded = (await loadDocuments(client, schema, session, [id], at)).get(id);
        return historicalValue(session, loaded, id, at);
      },
    };
  }
}
