import type { CommitOp } from "./commit-ops.js";
import { literal, row } from "./sql-literals.js";

/**
 * Renders row changes as SQL statements with inlined literals, for commit
 * scripts sent as one multi-statement query (which the simple query
 * protocol allows only without bind parameters). When a unique index
 * rejects a statement, the writer replays the call batch by batch with
 * these, to find the batch that broke one.
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

  /** The statements of one batch's row changes. */
  build(ops: readonly CommitOp[]): string[] {
    return ops.map((op) => this.#statement(op));
  }

  #statement(op: CommitOp): string {
    const s = this.#s;
    const k = this.#k;
    const values = () => row([this.#session, ...op.slice(1)]);
    switch (op[0]) {
      case "conversation":
        return `INSERT INTO ${s}.conversations (session_key, id, owner_task_id, record) VALUES ${values()}`;
      case "entry":
        return `INSERT INTO ${s}.entries (session_key, id, conversation_id, commit_seq, is_head, record) VALUES ${values()}`;
      case "task":
        return `INSERT INTO ${s}.tasks AS t (session_key, id, conversation_id, kind, status, abort_requested, background, owner, record) VALUES ${values()} ON CONFLICT (session_key, id) DO UPDATE SET conversation_id = excluded.conversation_id, kind = excluded.kind, status = excluded.status, abort_requested = excluded.abort_requested, background = excluded.background, owner = excluded.owner, record = excluded.record`;
      case "submission":
        return `INSERT INTO ${s}.submissions (session_key, id, conversation_id, status, request_json, record) VALUES ${values()} ON CONFLICT (session_key, id) DO UPDATE SET conversation_id = excluded.conversation_id, status = excluded.status, request_json = excluded.request_json, record = excluded.record`;
      case "document": {
        const [, id, kind, key, scope, rewindable, createdAt, version, baseSeq, record] = op;
        return `INSERT INTO ${s}.documents (session_key, id, kind, key_json, scope, rewindable, created_at, retired_at, version, base_seq, record) VALUES ${row(
          [
            this.#session,
            id,
            kind,
            key,
            scope,
            rewindable,
            createdAt,
            null,
            version,
            baseSeq,
            record,
          ],
        )}`;
      }
      case "revision":
        return `INSERT INTO ${s}.document_revisions (session_key, document_id, seq, kind, content, version) VALUES ${values()}`;
      case "rebase":
        return `UPDATE ${s}.documents SET version = ${literal(op[2])}, base_seq = ${op[3]} WHERE session_key = ${k} AND id = ${op[1]}`;
      case "trim":
        return `DELETE FROM ${s}.document_revisions WHERE session_key = ${k} AND document_id = ${op[1]} AND seq < ${op[2]}`;
      case "retire":
        return `UPDATE ${s}.documents SET retired_at = ${op[2]} WHERE session_key = ${k} AND id = ${op[1]}`;
      case "drop":
        return `DELETE FROM ${s}.document_revisions WHERE session_key = ${k} AND document_id = ${op[1]}`;
    }
  }
}

/** One session's values in a round's `fence_round` call (see `roundFenceSql`). */
export interface RoundRow {
  /** The session key as a SQL literal. */
  readonly key: string;
  readonly token: number;
  /** The next seq and id high-water mark to store; `highWater` null leaves the mark. */
  readonly nextSeq: number;
  readonly highWater: number | null;
}

/**
 * The one statement of a round's script that fences its sessions and
 * stores their counters: the schema's `fence_round`, which updates each
 * session's row in the order given (the round keeps session-key byte
 * order, so rows are locked in that order) where the lease token still
 * holds, and raises (`DU001`, as `fence`) at the first whose lease moved.
 * The round is then replayed session by session, so that one fails alone.
 */
export function roundFenceSql(schema: string, rows: readonly RoundRow[]): string {
  const keys = rows.map((r) => r.key).join(", ");
  const tokens = rows.map((r) => r.token).join(", ");
  const seqs = rows.map((r) => r.nextSeq).join(", ");
  const marks = rows.map((r) => (r.highWater === null ? "NULL" : r.highWater)).join(", ");
  return `SELECT ${schema}.fence_round(ARRAY[${keys}]::text[], ARRAY[${tokens}]::bigint[], ARRAY[${seqs}]::bigint[], ARRAY[${marks}]::bigint[])`;
}
