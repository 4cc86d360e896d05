import type { NewDocumentRecord } from "@durably/core";
import { scopeKey, type BatchPlan, type PlannedWrite } from "@durably/core/storage";
import { exactText } from "./sql-literals.js";

/**
 * One row change of a planned batch, its values in column order (the
 * session key is implied). Rendered either as a SQL statement with inlined
 * literals (`commit-statements.ts`) or passed as JSON to the schema's
 * `commit_calls` function (`commit-calls.ts`): both apply the same changes.
 */
export type CommitOp =
  /** id, owner_task_id, record */
  | ["conversation", number, number | null, string]
  /** id, conversation_id, commit_seq, is_head, record */
  | ["entry", number, number, number, boolean, string]
  /** id, conversation_id, kind, status, abort_requested, background, owner, record (upsert) */
  | ["task", number, number, string, string, boolean, boolean, number | null, string]
  /** id, conversation_id, status, request_json, record (upsert) */
  | ["submission", number, number, string, string | null, string]
  /** id, kind, key_json, scope, rewindable, created_at, version, base_seq, record */
  | ["document", number, string, string, string, boolean, number, number, number, string]
  /** document_id, seq, kind, content, version */
  | ["revision", number, number, "base" | "delta", string, number]
  /** id, version, base_seq: a new base */
  | ["rebase", number, number, number]
  /** document_id, seq: drop the revisions before seq */
  | ["trim", number, number]
  /** id, retired_at */
  | ["retire", number, number]
  /** document_id: drop every revision */
  | ["drop", number];

/**
 * Turns a planned batch into row changes, in the order the writes apply.
 * The planner has decided every refusal; what only the database can know (a
 * duplicate conversation, entry or document id, an address taken by a
 * document this storage never saw) is left to its unique indexes.
 */
export function batchOps(plan: BatchPlan): CommitOp[] {
  const ops: CommitOp[] = [];
  for (const write of plan.writes) writeOps(write, plan.seq, ops);
  return ops;
}

function writeOps(write: PlannedWrite, seq: number, ops: CommitOp[]): void {
  switch (write.type) {
    case "conversation": {
      const v = write.value;
      ops.push(["conversation", v.id, v.owner?.taskId ?? null, JSON.stringify(v)]);
      return;
    }
    case "entry": {
      const v = write.value;
      ops.push(["entry", v.id, v.conversationId, seq, v.head != null, JSON.stringify(v)]);
      return;
    }
    case "task": {
      const v = write.value;
      ops.push([
        "task",
        v.id,
        v.conversationId,
        exactText(v.kind),
        v.state.status,
        v.abortRequested === true,
        v.background === true,
        v.owner ?? null,
        JSON.stringify(v),
      ]);
      return;
    }
    case "submission": {
      const v = write.value;
      ops.push([
        "submission",
        v.id,
        v.conversationId,
        v.status,
        v.requestId === undefined ? null : exactText(v.requestId),
        JSON.stringify(v),
      ]);
      return;
    }
    case "document.create": {
      // Storage stamps createdAt / retiredAt into columns; the record column keeps the rest.
      const { createdAt: _created, ...record } = write.record as NewDocumentRecord & {
        createdAt?: unknown;
      };
      const { content } = write;
      ops.push(
        [
          "document",
          record.id,
          exactText(record.kind),
          record.key === undefined ? "" : exactText(record.key),
          scopeKey(record.scope),
          !write.currentOnly,
          seq,
          content.version,
          seq,
          JSON.stringify(record),
        ],
        ["revision", record.id, seq, "base", JSON.stringify(content.value), content.version],
      );
      return;
    }
    case "document.change": {
      const { id, content } = write;
      if (content.kind === "delta") {
        ops.push(["revision", id, seq, "delta", JSON.stringify(content.ops), content.version]);
        return;
      }
      ops.push(
        ["revision", id, seq, "base", JSON.stringify(content.value), content.version],
        ["rebase", id, content.version, seq],
      );
      // Current-only: nothing before the newest base can be read again, so reclaim it now.
      if (write.currentOnly) ops.push(["trim", id, seq]);
      return;
    }
    case "document.retire": {
      const { id } = write;
      ops.push(["retire", id, seq]);
      if (write.currentOnly) ops.push(["drop", id]);
      return;
    }
  }
}
