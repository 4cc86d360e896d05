import type { BatchRefused } from "../domain/errors.js";
import type { DocumentAddress, Batch, CommitResult } from "./port.js";
import { refuse, type BatchProblem } from "./batch-checks.js";
import type { CommitCall, CommitOutcome } from "./backend.js";
import { isProblem, planInto } from "./plan-batch.js";
import { PlanLayer } from "./plan-layer.js";
import type { BatchPlan, PlanNeeds, PlanView, WriteConflict } from "./plan-types.js";
import { refusals } from "./refusals.js";

/**
 * One `commit` call as the front hands it to a backend: the detached batches
 * up to (not including) the first one that failed detachment or the shape
 * checks, the planner, and afterwards the translation of what the backend
 * stored into the `CommitResult`.
 */
export class PlannedCall implements CommitCall {
  #needs: PlanNeeds | undefined;
  #plans: BatchPlan[] | undefined;
  #refused: BatchRefused | undefined;

  constructor(
    readonly batches: readonly Batch[],
    /** The problem of batch `batches.length`, which detachment or the shape checks refused. */
    private readonly invalid: BatchProblem | undefined,
  ) {}

  needs(): PlanNeeds {
    return (this.#needs ??= collectNeeds(this.batches));
  }

  plan(view: PlanView, firstSeq: number): readonly BatchPlan[] {
    if (this.#plans !== undefined) throw new Error("CommitCall.plan was called twice");
    const layer = new PlanLayer(view);
    const plans: BatchPlan[] = [];
    for (let b = 0; b < this.batches.length; b++) {
      const result = planInto(layer, this.batches[b] as Batch, firstSeq + b);
      if (isProblem(result)) {
        this.#refused = refuse(b, result);
        break;
      }
      plans.push(result);
    }
    if (this.#refused === undefined && this.invalid !== undefined)
      this.#refused = refuse(this.batches.length, this.invalid);
    return (this.#plans = plans);
  }

  /** Checks what the backend reports, calls `receive` for every stored batch and builds the result. */
  finish(
    outcome: CommitOutcome,
    receive: (index: number, seq: number) => void,
    backend: string,
  ): CommitResult {
    const { stored, conflict } = outcome;
    let plans = this.#plans;
    if (plans === undefined) {
      // Nothing planned: an empty call, one whose first batch failed detachment, or a conflict at batch 0.
      if (this.batches.length > 0 && (stored !== 0 || conflict?.batchIndex !== 0))
        throw new Error(`${backend}: commit resolved without planning the call (call.plan)`);
      plans = [];
      if (this.invalid !== undefined) this.#refused = refuse(0, this.invalid);
    }
    const expected = conflict === undefined ? plans.length : conflict.batchIndex;
    const planned = Math.max(plans.length, conflict === undefined ? 0 : 1);
    if (stored !== expected || (conflict !== undefined && conflict.batchIndex >= planned))
      throw new Error(
        `${backend}: commit reported ${stored} stored batches${conflict ? ` and a conflict in batch ${conflict.batchIndex}` : ""}, of ${plans.length} planned`,
      );
    for (let i = 0; i < stored; i++) receive(i, (plans[i] as BatchPlan).seq);
    const refused =
      conflict !== undefined
        ? refuse(conflict.batchIndex, conflictProblem(this.batches, conflict))
        : this.#refused;
    return refused === undefined ? { stored } : { stored, refused };
  }
}

/** The refusal of a uniqueness a backend enforced at apply time. */
function conflictProblem(batches: readonly Batch[], conflict: WriteConflict): BatchProblem {
  const i = conflict.writeIndex;
  const write = batches[conflict.batchIndex]?.[i];
  if (conflict.kind === "unstorable" && write !== undefined)
    return refusals.tooLarge(
      i,
      `batches[${conflict.batchIndex}][${i}]`,
      conflict.detail ?? "the engine could not serialise it",
    );
  switch (write?.type) {
    case "conversation":
      if (conflict.kind === "conversation-exists")
        return refusals.conversationStored(i, write.value.id);
      break;
    case "entry":
      if (conflict.kind === "entry-exists") return refusals.entryStored(i, write.value.id);
      break;
    case "document.create":
    case "document.copy":
      if (conflict.kind === "document-exists") return refusals.documentExists(i, write.record.id);
      if (conflict.kind === "address-occupied")
        return refusals.addressOccupied(i, write.record, conflict.holder);
      break;
    default:
      break;
  }
  throw new Error(
    `the backend reported a ${conflict.kind} conflict at batch ${conflict.batchIndex} write ${i}, which is a ${write?.type ?? "missing"} write`,
  );
}

/** Everything planning `batches` may ask a view, gathered in one pass. */
export function collectNeeds(batches: readonly Batch[]): PlanNeeds {
  const conversations = new Set<number>();
  const documents = new Set<number>();
  const values = new Set<number>();
  const newConversations = new Set<number>();
  const newEntries = new Set<number>();
  const newDocuments = new Set<number>();
  const addresses: DocumentAddress[] = [];
  const history: { id: number; at: number }[] = [];
  for (const batch of batches)
    for (const write of batch)
      switch (write.type) {
        case "conversation":
          newConversations.add(write.value.id);
          if (write.value.parent) conversations.add(write.value.parent.conversationId);
          break;
        case "entry":
          newEntries.add(write.value.id);
          conversations.add(write.value.conversationId);
          break;
        case "task":
        case "submission":
          conversations.add(write.value.conversationId);
          break;
        case "document.create":
        case "document.copy":
          newDocuments.add(write.record.id);
          addresses.push({
            kind: write.record.kind,
            scope: write.record.scope,
            ...(write.record.key === undefined ? {} : { key: write.record.key }),
          });
          if (write.type === "document.copy") {
            const { id, at } = write.source;
            if (at === "current") {
              documents.add(id);
              values.add(id);
            } else history.push({ id, at });
          }
          break;
        case "document.change":
          documents.add(write.id);
          if (write.content.kind === "delta") values.add(write.id);
          break;
        case "document.retire":
          documents.add(write.id);
          break;
      }
  return {
    conversations,
    documents,
    values,
    newConversations,
    newEntries,
    newDocuments,
    addresses,
    history,
  };
}
