import {
  applyOps,
  InvalidOp,
  StorageRequestError,
  type Json,
  type NewDocumentRecord,
  type RefusalReason,
  type StorageWrite,
} from "@durably/core";
import { scopeKey, type BatchProblem } from "@durably/core/storage";
import type { CheckedBatch } from "./commit-plan.js";
import { materialize, type MaterializedValue } from "./documents.js";
import { liveState, type DocumentState } from "./known-state.js";
import { isLiveRow } from "./rows.js";
import { exactText, literal, row, type Literal } from "./sql-literals.js";

/** A batch turned into SQL, with what it changes once committed. */
export interface BatchStatements {
  statements: string[];
  /** Document states after this batch (retired ones carry `retiredAt`). */
  documents: Map<number, DocumentState>;
  conversations: number[];
  highestId: number;
}

/** What the builder may look up: committed state at the start of the call. */
export interface StateSource {
  conversationExists(id: number): boolean;
  /** `undefined`: the document does not exist. */
  document(id: number): DocumentState | undefined;
  /** A committed historical value of a document (for copies `at` a seq), or a reason it has none. */
  documentAt(id: number, at: number): Promise<{ version: number; value: Json } | string>;
}

function problem(writeIndex: number, reason: RefusalReason, message: string): BatchProblem {
  return { writeIndex, reason, message };
}

function isCurrentOnly(record: NewDocumentRecord): boolean {
  return record.scope.kind !== "conversation" || record.history !== "rewindable";
}

/**
 * Turns the batches of one commit call into SQL, batch by batch, checking
 * each write against the committed state plus every earlier write of the
 * call, exactly as the database will see them when the statements run in
 * order. Stops at the first batch that must be refused. What only the
 * database can know (a duplicate entry or document id, an address taken by a
 * document this storage never saw) is left to its unique indexes: the
 * statements then fail with a unique violation, and the caller replays the
 * call batch by batch to find the refused one.
 */
export class StatementBuilder {
  readonly #s: string;
  readonly #session: string;
  readonly #k: string;

  constructor(schema: string, session: string) {
    this.#s = schema;
    this.#session = session;
    this.#k = literal(session);
  }

  async build(
    batches: readonly CheckedBatch[],
    firstSeq: number,
    committed: StateSource,
  ): Promise<{ built: BatchStatements[]; refused?: { index: number; problem: BatchProblem } }> {
    const built: BatchStatements[] = [];
    const documents = new Map<number, DocumentState>();
    const conversations = new Set<number>();
    const state = (id: number) => (documents.has(id) ? documents.get(id) : committed.document(id));
    const conversationExists = (id: number) =>
      conversations.has(id) || committed.conversationExists(id);
    for (let i = 0; i < batches.length; i++) {
      const batch = batches[i] as CheckedBatch;
      if ("problem" in batch) return { built, refused: { index: i, problem: batch.problem } };
      const seq = firstSeq + i;
      const result = await this.#batch(
        batch.writes,
        seq,
        firstSeq - 1,
        state,
        conversationExists,
        committed,
      );
      if ("problem" in result) return { built, refused: { index: i, problem: result.problem } };
      for (const [id, s] of result.documents) documents.set(id, s);
      for (const id of result.conversations) conversations.add(id);
      built.push({ ...result, highestId: batch.highestId });
    }
    return { built };
  }

  async #batch(
    writes: readonly StorageWrite[],
    seq: number,
    lastCommitted: number,
    before: (id: number) => DocumentState | undefined,
    conversationExistsBefore: (id: number) => boolean,
    committed: StateSource,
  ): Promise<Omit<BatchStatements, "highestId"> | { problem: BatchProblem }> {
    const s = this.#s;
    const k = this.#k;
    const statements: string[] = [];
    const documents = new Map<number, DocumentState>();
    const conversations: number[] = [];
    const state = (id: number) => (documents.has(id) ? documents.get(id) : before(id));
    const conversationExists = (id: number) =>
      conversations.includes(id) || conversationExistsBefore(id);
    const retires: { index: number; id: number }[] = [];
    for (let index = 0; index < writes.length; index++) {
      const write = writes[index] as StorageWrite;
      // Entries, tasks and submissions all belong to a conversation that must exist by now.
      if (
        (write.type === "entry" || write.type === "task" || write.type === "submission") &&
        !conversationExists(write.value.conversationId)
      )
        return {
          problem: problem(
            index,
            "unknown-conversation",
            `${write.type} ${write.value.id} names unknown conversation ${write.value.conversationId}`,
          ),
        };
      switch (write.type) {
        case "conversation": {
          const v = write.value;
          if (conversationExists(v.id))
            return {
              problem: problem(index, "immutable-record", `conversation ${v.id} is already stored`),
            };
          const parent = v.parent?.conversationId;
          if (parent !== undefined && !conversationExists(parent))
            return {
              problem: problem(
                index,
                "unknown-conversation",
                `conversation ${v.id} forks from unknown conversation ${parent}`,
              ),
            };
          statements.push(
            `INSERT INTO ${s}.conversations (session_key, id, owner_task_id, record) VALUES ${row([
              this.#session,
              v.id,
              v.owner?.taskId ?? null,
              JSON.stringify(v),
            ])}`,
          );
          conversations.push(v.id);
          break;
        }
        case "entry": {
          const v = write.value;
          const isHead = (v as { head?: unknown }).head != null;
          statements.push(
            `INSERT INTO ${s}.entries (session_key, id, conversation_id, commit_seq, is_head, record) VALUES ${row(
              [this.#session, v.id, v.conversationId, seq, isHead, JSON.stringify(v)],
            )}`,
          );
          break;
        }
        case "task": {
          const v = write.value;
          statements.push(
            `INSERT INTO ${s}.tasks AS t (session_key, id, conversation_id, kind, status, abort_requested, background, owner, record) VALUES ${row(
              [
                this.#session,
                v.id,
                v.conversationId,
                exactText(v.kind),
                v.state.status,
                v.abortRequested === true,
                v.background === true,
                v.owner ?? null,
                JSON.stringify(v),
              ],
            )} ON CONFLICT (session_key, id) DO UPDATE SET conversation_id = excluded.conversation_id, kind = excluded.kind, status = excluded.status, abort_requested = excluded.abort_requested, background = excluded.background, owner = excluded.owner, record = excluded.record`,
          );
          break;
        }
        case "submission": {
          const v = write.value;
          statements.push(
            `INSERT INTO ${s}.submissions (session_key, id, conversation_id, status, request_json, record) VALUES ${row(
              [
                this.#session,
                v.id,
                v.conversationId,
                v.status,
                v.requestId === undefined ? null : exactText(v.requestId),
                JSON.stringify(v),
              ],
            )} ON CONFLICT (session_key, id) DO UPDATE SET conversation_id = excluded.conversation_id, status = excluded.status, request_json = excluded.request_json, record = excluded.record`,
          );
          break;
        }
        case "document.create":
        case "document.copy": {
          // Storage stamps createdAt / retiredAt; the record column keeps the rest.
          const {
            createdAt: _created,
            retiredAt: _retired,
            ...record
          } = write.record as NewDocumentRecord & { createdAt?: unknown; retiredAt?: unknown };
          const known = state(record.id);
          if (known !== undefined)
            return {
              problem: problem(index, "duplicate-id", `document ${record.id} already exists`),
            };
          let base: { version: number; value: Json };
          if (write.type === "document.create") base = write.content;
          else {
            const source = await this.#copySource(write.source, lastCommitted, state, committed);
            if (typeof source === "string")
              return {
                problem: problem(
                  index,
                  "unknown-document",
                  `document ${record.id} copy: ${source}`,
                ),
              };
            base = source;
          }
          const rewindable = !isCurrentOnly(record);
          statements.push(
            `INSERT INTO ${s}.documents (session_key, id, kind, key_json, scope, rewindable, created_at, retired_at, version, base_seq, record) VALUES ${row(
              [
                this.#session,
                record.id,
                exactText(record.kind),
                record.key === undefined ? "" : exactText(record.key),
                scopeKey(record.scope),
                rewindable,
                seq,
                null,
                base.version,
                seq,
                JSON.stringify(record),
              ],
            )}`,
            this.#revision(record.id, seq, "base", JSON.stringify(base.value), base.version),
          );
          documents.set(record.id, liveState(base.version, base.value, 0, rewindable));
          break;
        }
        case "document.change": {
          const id = write.id;
          const known = state(id);
          if (known === undefined)
            return { problem: problem(index, "unknown-document", `document ${id} does not exist`) };
          if (known.retiredAt !== null)
            return {
              problem: problem(
                index,
                "retired-document",
                `document ${id} was retired at seq ${known.retiredAt}`,
              ),
            };
          const content = write.content;
          if (content.kind === "base") {
            statements.push(
              this.#revision(id, seq, "base", JSON.stringify(content.value), content.version),
              `UPDATE ${s}.documents SET version = ${literal(content.version)}, base_seq = ${seq} WHERE session_key = ${k} AND id = ${id}`,
            );
            // Current-only: nothing before the newest base can be read again, so reclaim it now.
            if (!known.rewindable)
              statements.push(
                `DELETE FROM ${s}.document_revisions WHERE session_key = ${k} AND document_id = ${id} AND seq < ${seq}`,
              );
            documents.set(id, liveState(content.version, content.value, 0, known.rewindable));
            break;
          }
          if (content.version !== known.version)
            return {
              problem: problem(
                index,
                "version-crossing",
                `document ${id}: a delta for version ${content.version} on version ${known.version} (a version change needs a base)`,
              ),
            };
          const current = known.current as MaterializedValue;
          let value: Json;
          try {
            value = applyOps(current.value, content.ops);
          } catch (error) {
            if (!(error instanceof InvalidOp)) throw error;
            // Storing it would leave a document that can never be read again.
            return {
              problem: problem(
                index,
                "invalid-write",
                `document ${id} delta does not apply to its current value: ${error.message}`,
              ),
            };
          }
          statements.push(
            this.#revision(id, seq, "delta", JSON.stringify(content.ops), content.version),
          );
          documents.set(
            id,
            liveState(content.version, value, current.deltasSinceBase + 1, known.rewindable),
          );
          break;
        }
        case "document.retire":
          retires.push({ index, id: write.id });
          break;
      }
    }
    // Retirement takes effect after every content write of the batch.
    const retired = new Set<number>();
    for (const { index, id } of retires) {
      const known = state(id);
      if (known === undefined)
        return { problem: problem(index, "unknown-document", `document ${id} does not exist`) };
      if (retired.has(id))
        return {
          problem: problem(
            index,
            "retired-document",
            `document ${id} is retired twice in one batch`,
          ),
        };
      if (known.retiredAt !== null)
        return {
          problem: problem(
            index,
            "retired-document",
            `document ${id} was retired at seq ${known.retiredAt}`,
          ),
        };
      retired.add(id);
      statements.push(
        `UPDATE ${s}.documents SET retired_at = ${seq} WHERE session_key = ${k} AND id = ${id}`,
      );
      if (!known.rewindable)
        statements.push(
          `DELETE FROM ${s}.document_revisions WHERE session_key = ${k} AND document_id = ${id}`,
        );
      documents.set(id, { version: known.version, rewindable: known.rewindable, retiredAt: seq });
    }
    return { statements, documents, conversations };
  }

  #revision(
    id: number,
    seq: number,
    kind: "base" | "delta",
    content: string,
    version: number,
  ): string {
    const values: Literal[] = [this.#session, id, seq, kind, content, version];
    return `INSERT INTO ${this.#s}.document_revisions (session_key, document_id, seq, kind, content, version) VALUES ${row(values)}`;
  }

  /** The copy source's value, or a string saying why it cannot be copied. */
  async #copySource(
    source: { id: number; at: number | "current" },
    lastCommitted: number,
    state: (id: number) => DocumentState | undefined,
    committed: StateSource,
  ): Promise<{ version: number; value: Json } | string> {
    const { id, at } = source;
    if (at === "current") {
      const known = state(id);
      if (known === undefined) return `source document ${id} does not exist`;
      if (known.retiredAt !== null || known.current === undefined)
        return `source document ${id} is not live at current`;
      return known.current;
    }
    // Older seqs are read from the database, which holds only what earlier calls committed.
    if (at > lastCommitted)
      return `source seq ${at} is not committed yet (newest committed seq is ${lastCommitted})`;
    return committed.documentAt(id, at);
  }
}

/** A historical value read for a copy, as `StateSource.documentAt` answers it. */
export function historicalValue(
  session: string,
  loaded: Parameters<typeof materialize>[1] | undefined,
  id: number,
  at: number,
): { version: number; value: Json } | string {
  if (loaded === undefined) return `source document ${id} does not exist`;
  if (!isLiveRow(loaded.row, at)) return `source document ${id} is not live at seq ${at}`;
  try {
    return materialize(session, loaded, at);
  } catch (error) {
    if (error instanceof StorageRequestError)
      return `source document ${id} at seq ${at}: ${error.message}`;
    throw error;
  }
}
