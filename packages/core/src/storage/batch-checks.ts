import { BatchRefused, type RefusalReason } from "../domain/errors.js";
import { isPositiveSafeInteger } from "../domain/ids.js";
import { validateOp } from "../domain/ops.js";
import type { Batch, StorageWrite } from "./port.js";

export interface BatchProblem {
  writeIndex: number;
  reason: RefusalReason;
  message: string;
}

const TASK_STATUSES = new Set(["pending", "running", "waiting", "completing", "terminal"]);
const SUBMISSION_STATUSES = new Set(["queued", "placed", "done", "unanswered"]);

function isScope(scope: unknown): boolean {
  const s = scope as Record<string, unknown> | null;
  if (typeof s !== "object" || s === null) return false;
  if (s.kind === "session") return true;
  if (s.kind === "conversation") return isPositiveSafeInteger(s.conversationId);
  if (s.kind === "task") return isPositiveSafeInteger(s.taskId);
  return false;
}

function shapeProblem(write: StorageWrite): string | undefined {
  const w = write as unknown as Record<string, unknown>;
  switch (write.type) {
    case "conversation": {
      const v = write.value as unknown as Record<string, unknown> | undefined;
      if (!v || !isPositiveSafeInteger(v.id)) return "conversation needs a positive integer id";
      // Ancestry and ownership are followed by scans; a malformed link would break them later.
      const parent = v.parent as Record<string, unknown> | undefined;
      if (
        parent !== undefined &&
        (typeof parent !== "object" ||
          parent === null ||
          !isPositiveSafeInteger(parent.conversationId) ||
          !isPositiveSafeInteger(parent.at))
      )
        return `conversation ${String(v.id)} parent needs { conversationId, at } ids`;
      const owner = v.owner as Record<string, unknown> | undefined;
      if (
        owner !== undefined &&
        (typeof owner !== "object" ||
          owner === null ||
          !isPositiveSafeInteger(owner.conversationId) ||
          !isPositiveSafeInteger(owner.taskId))
      )
        return `conversation ${String(v.id)} owner needs { conversationId, taskId } ids`;
      return undefined;
    }
    case "entry": {
      const v = write.value as unknown as Record<string, unknown> | undefined;
      if (!v || !isPositiveSafeInteger(v.id)) return "entry needs a positive integer id";
      if (!isPositiveSafeInteger(v.conversationId))
        return `entry ${String(v.id)} needs a conversationId`;
      if (typeof v.kind !== "string") return `entry ${String(v.id)} needs a string kind`;
      return undefined;
    }
    case "task": {
      const v = write.value as unknown as Record<string, unknown> | undefined;
      if (!v || !isPositiveSafeInteger(v.id)) return "task needs a positive integer id";
      if (!isPositiveSafeInteger(v.conversationId))
        return `task ${String(v.id)} needs a conversationId`;
      if (typeof v.kind !== "string") return `task ${String(v.id)} needs a string kind`;
      const state = v.state as Record<string, unknown> | undefined;
      if (!state || !TASK_STATUSES.has(state.status as string))
        return `task ${String(v.id)} has no valid state.status`;
      return undefined;
    }
    case "submission": {
      const v = write.value as unknown as Record<string, unknown> | undefined;
      if (!v || !isPositiveSafeInteger(v.id)) return "submission needs a positive integer id";
      if (!isPositiveSafeInteger(v.conversationId))
        return `submission ${String(v.id)} needs a conversationId`;
      if (!SUBMISSION_STATUSES.has(v.status as string))
        return `submission ${String(v.id)} has no valid status`;
      return undefined;
    }
    case "document.create":
    case "document.copy": {
      const r = write.record as unknown as Record<string, unknown> | undefined;
      if (!r || !isPositiveSafeInteger(r.id))
        return `${write.type} needs a record with a positive integer id`;
      if (typeof r.kind !== "string") return `document ${String(r.id)} needs a string kind`;
      if (r.key !== undefined && typeof r.key !== "string")
        return `document ${String(r.id)} key must be a string`;
      if (!isScope(r.scope)) return `document ${String(r.id)} has no valid scope`;
      // `history` decides whether revisions may be reclaimed, so a typo must not pass as "latest".
      if (r.history !== undefined && r.history !== "latest" && r.history !== "rewindable")
        return `document ${String(r.id)} history must be "latest" or "rewindable"`;
      if (r.fork !== undefined && r.fork !== "asOf" && r.fork !== "current" && r.fork !== "initial")
        return `document ${String(r.id)} fork must be "asOf", "current" or "initial"`;
      if (write.type === "document.create") {
        const c = write.content as unknown as Record<string, unknown> | undefined;
        if (!c || c.kind !== "base" || !isPositiveSafeInteger(c.version) || !("value" in c))
          return `document ${String(r.id)} must be created with a base content`;
      } else {
        const s = write.source as unknown as Record<string, unknown> | undefined;
        if (
          !s ||
          !isPositiveSafeInteger(s.id) ||
          !(s.at === "current" || isPositiveSafeInteger(s.at))
        )
          return `document ${String(r.id)} copy needs a source { id, at }`;
      }
      return undefined;
    }
    case "document.change": {
      if (!isPositiveSafeInteger(w.id)) return "document.change needs a positive integer id";
      const c = write.content as unknown as Record<string, unknown> | undefined;
      if (!c || !isPositiveSafeInteger(c.version))
        return `document ${String(w.id)} change needs a version`;
      if (c.kind === "base")
        return "value" in c ? undefined : `document ${String(w.id)} base needs a value`;
      if (c.kind !== "delta" || !Array.isArray(c.ops))
        return `document ${String(w.id)} change needs base or delta content`;
      try {
        (c.ops as unknown[]).forEach((op, i) => validateOp(op, i));
      } catch (error) {
        return `document ${String(w.id)} delta: ${(error as Error).message}`;
      }
      return undefined;
    }
    case "document.retire":
      return isPositiveSafeInteger(w.id)
        ? undefined
        : "document.retire needs a positive integer id";
    default:
      return `unknown write type ${JSON.stringify(w.type)}`;
  }
}

function writeProblem(write: unknown): string | undefined {
  return typeof write === "object" && write !== null
    ? shapeProblem(write as StorageWrite)
    : "a write must be an object";
}

/**
 * The checks of a batch that need no stored state: every write well formed,
 * no two content writes for one document, no record id written twice where
 * records are immutable. Backends run it first, then their own state checks.
 */
export function checkBatchShape(batch: Batch): BatchProblem | undefined {
  if (!Array.isArray(batch))
    return {
      writeIndex: 0,
      reason: "invalid-write",
      message: "a batch must be an array of writes",
    };
  // One write repeats nothing: no sets (adapters check every stored line this way on open).
  if (batch.length === 1) {
    const problem = writeProblem(batch[0]);
    return problem === undefined
      ? undefined
      : { writeIndex: 0, reason: "invalid-write", message: problem };
  }
  const content = new Set<number>();
  const conversations = new Set<number>();
  const entries = new Set<number>();
  for (let i = 0; i < batch.length; i++) {
    const write = batch[i] as StorageWrite;
    const problem = writeProblem(write);
    if (problem !== undefined) return { writeIndex: i, reason: "invalid-write", message: problem };
    if (
      write.type === "document.create" ||
      write.type === "document.copy" ||
      write.type === "document.change"
    ) {
      const id = write.type === "document.change" ? write.id : write.record.id;
      if (content.has(id))
        return {
          writeIndex: i,
          reason: "double-content",
          message: `two content writes for document ${id} in one batch`,
        };
      content.add(id);
    } else if (write.type === "conversation") {
      if (conversations.has(write.value.id))
        return {
          writeIndex: i,
          reason: "immutable-record",
          message: `conversation ${write.value.id} written twice in one batch`,
        };
      conversations.add(write.value.id);
    } else if (write.type === "entry") {
      if (entries.has(write.value.id))
        return {
          writeIndex: i,
          reason: "immutable-record",
          message: `entry ${write.value.id} written twice in one batch`,
        };
      entries.add(write.value.id);
    }
  }
  return undefined;
}

/** Builds the `refused` error for batch `batchIndex` of a commit call. */
export function refuse(batchIndex: number, problem: BatchProblem): BatchRefused {
  return new BatchRefused(problem.reason, batchIndex, problem.writeIndex, problem.message);
}

/** The highest record id a batch writes, so backends can raise their id high-water mark in the same commit. */
export function highestId(batch: Batch): number {
  let max = 0;
  for (const write of batch) {
    let id = 0;
    switch (write.type) {
      case "conversation":
      case "entry":
      case "task":
      case "submission":
        id = write.value.id;
        break;
      case "document.create":
      case "document.copy":
        id = write.record.id;
        break;
      default:
        break;
    }
    if (id > max) max = id;
  }
  return max;
}
