import type { NewDocumentRecord } from "@durably/core";
import { scopeKey, type BatchPlan, type PlannedWrite } from "@durably/core/storage";
import { exactText, literal, row, type Literal } from "./sql-literals.js";

/**
 * Turns planned batches into SQL, in the order the writes apply. The
 * planner has decided every refusal; what only the database can know (a
 * duplicate conversation, entry or document id, an address taken by a
 * document this storage never saw) is left to its unique indexes: the
 * statements then fail with a unique violation, and the writer replays the
 * call batch by batch to find the batch that broke one.
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

  /** The statements of one planned batch. */
  build(plan: BatchPlan): string[] {
    const statements: string[] = [];
    for (const write of plan.writes) this.#write(write, plan.seq, statements);
    return statements;
  }

  #write(write: PlannedWrite, seq: number, statements: string[]): void {
    const s = this.#s;
    const k = this.#k;
    switch (write.type) {
      case "conversation": {
        const v = write.value;
        statements.push(
          `INSERT INTO ${s}.conversations (session_key, id, owner_task_id, record) VALUES ${row([
            this.#session,
            v.id,
            v.owner?.taskId ?? null,
            JSON.stringify(v),
          ])}`,
        );
        return;
      }
      case "entry": {
        const v = write.value;
        statements.push(
          `INSERT INTO ${s}.entries (session_key, id, conversation_id, commit_seq, is_head, record) VALUES ${row(
            [this.#session, v.id, v.conversationId, seq, v.head != null, JSON.stringify(v)],
          )}`,
        );
        return;
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
        return;
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
        return;
      }
      case "document.create": {
        // Storage stamps createdAt / retiredAt into columns; the record column keeps the rest.
        const { createdAt: _created, ...record } = write.record as NewDocumentRecord & {
          createdAt?: unknown;
        };
        const { content } = write;
        statements.push(
          `INSERT INTO ${s}.documents (session_key, id, kind, key_json, scope, rewindable, created_at, retired_at, version, base_seq, record) VALUES ${row(
            [
              this.#session,
              record.id,
              exactText(record.kind),
              record.key === undefined ? "" : exactText(record.key),
              scopeKey(record.scope),
              !write.currentOnly,
              seq,
              null,
              content.version,
              seq,
              JSON.stringify(record),
            ],
          )}`,
          this.#revision(record.id, seq, "base", JSON.stringify(content.value), content.version),
        );
        return;
      }
      case "document.change": {
        const { id, content } = write;
        if (content.kind === "delta") {
          statements.push(
            this.#revision(id, seq, "delta", JSON.stringify(content.ops), content.version),
          );
          return;
        }
        statements.push(
          this.#revision(id, seq, "base", JSON.stringify(content.value), content.version),
          `UPDATE ${s}.documents SET version = ${literal(content.version)}, base_seq = ${seq} WHERE session_key = ${k} AND id = ${id}`,
        );
        // Current-only: nothing before the newest base can be read again, so reclaim it now.
        if (write.currentOnly)
          statements.push(
            `DELETE FROM ${s}.document_revisions WHERE session_key = ${k} AND document_id = ${id} AND seq < ${seq}`,
          );
        return;
      }
      case "document.retire": {
        const { id } = write;
        statements.push(
          `UPDATE ${s}.documents SET retired_at = ${seq} WHERE session_key = ${k} AND id = ${id}`,
        );
        if (write.currentOnly)
          statements.push(
            `DELETE FROM ${s}.document_revisions WHERE session_key = ${k} AND document_id = ${id}`,
          );
        return;
      }
    }
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
}
