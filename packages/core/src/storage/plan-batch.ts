import { InvalidOp, StorageRequestError } from "../domain/errors.js";
import type { DocumentId, Seq } from "../domain/ids.js";
import { applyOps } from "../domain/ops.js";
import type { DocumentRecord } from "../domain/records.js";
import { checkBatchShape, highestId, type BatchProblem } from "./batch-checks.js";
import { isCurrentOnly, isLiveAt } from "./lifetimes.js";
import { historyRetired, historyUnavailable } from "./materialize.js";
import { PlanLayer } from "./plan-layer.js";
import type {
  BatchPlan,
  CurrentValue,
  PlanDocument,
  PlannedWrite,
  PlanView,
} from "./plan-types.js";
import type { Batch, BaseContent, StorageWrite } from "./port.js";
import { refusals, uncopyable } from "./refusals.js";

/**
 * The refusal engine: checks one batch against `view` (the stored state plus
 * whatever was planned before it) and returns either the first problem or
 * the plan to store. Every rule a batch can break lives here or in
 * `checkBatchShape`; a backend only answers the view's questions and
 * applies plans. Runs the shape checks first.
 */
export function planBatch(batch: Batch, view: PlanView, seq: number): BatchPlan | BatchProblem {
  const shape = checkBatchShape(batch);
  if (shape !== undefined) return shape;
  return planInto(new PlanLayer(view), batch, seq);
}

/** True when `planBatch` returned a problem rather than a plan. */
export function isProblem(result: BatchPlan | BatchProblem): result is BatchProblem {
  return "reason" in result;
}

/**
 * Plans a shape-checked batch into `layer`, which keeps the batch's effects
 * so its later writes (and later batches of the call sharing the layer) see
 * them. After a problem the layer holds part of the batch: the caller stops.
 */
export function planInto(layer: PlanLayer, batch: Batch, seq: number): BatchPlan | BatchProblem {
  const writes: PlannedWrite[] = [];
  let retires: { index: number; id: DocumentId }[] | undefined;
  for (let i = 0; i < batch.length; i++) {
    const write = batch[i] as StorageWrite;
    let problem: BatchProblem | undefined;
    switch (write.type) {
      case "conversation": {
        const { id, parent } = write.value;
        if (layer.hasConversation(id)) return refusals.conversationStored(i, id);
        if (parent !== undefined && !layer.hasConversation(parent.conversationId))
          return refusals.forkOfUnknown(i, id, parent.conversationId);
        layer.addConversation(id);
        writes.push({ type: "conversation", index: i, value: write.value });
        break;
      }
      case "entry": {
        const { id, conversationId } = write.value;
        if (layer.hasEntry(id)) return refusals.entryStored(i, id);
        if (!layer.hasConversation(conversationId))
          return refusals.unknownConversation(i, "entry", id, conversationId);
        layer.addEntry(id);
        writes.push({ type: "entry", index: i, value: write.value });
        break;
      }
      case "task":
      case "submission": {
        const { id, conversationId } = write.value;
        if (!layer.hasConversation(conversationId))
          return refusals.unknownConversation(i, write.type, id, conversationId);
        writes.push(
          write.type === "task"
            ? { type: "task", index: i, value: write.value }
            : { type: "submission", index: i, value: write.value },
        );
        break;
      }
      case "document.create":
      case "document.copy":
        problem = planCreate(layer, write, i, seq, writes);
        break;
      case "document.change":
        problem = planChange(layer, write, i, seq, writes);
        break;
      case "document.retire":
        (retires ??= []).push({ index: i, id: write.id });
        break;
    }
    if (problem !== undefined) return problem;
  }
  // Retirement takes effect after every content write of the batch.
  if (retires !== undefined) {
    const retiring = new Map<number, PlanDocument>();
    for (const { index, id } of retires) {
      const doc = layer.document(id);
      if (doc === undefined) return refusals.unknownDocument(index, id);
      if (doc.retiredAt !== undefined) return refusals.retired(index, id, doc.retiredAt);
      if (retiring.has(id)) return refusals.retiredTwice(index, id);
      retiring.set(id, doc);
      writes.push({ type: "document.retire", index, id, currentOnly: doc.currentOnly });
    }
    for (const [id, doc] of retiring) layer.retireDocument(id, doc, seq);
  }
  return { seq, writes, highestId: highestId(batch) };
}

function planCreate(
  layer: PlanLayer,
  write: Extract<StorageWrite, { type: "document.create" | "document.copy" }>,
  i: number,
  seq: number,
  writes: PlannedWrite[],
): BatchProblem | undefined {
  const { createdAt: _created, retiredAt: _retired, ...fields } = write.record as DocumentRecord;
  const record = { ...fields, createdAt: seq as Seq } as DocumentRecord;
  if (layer.document(record.id) !== undefined) return refusals.documentExists(i, record.id);
  const holder = layer.liveAt(record);
  if (holder !== undefined) return refusals.addressOccupied(i, record, holder);
  let content: BaseContent;
  if (write.type === "document.create") content = write.content;
  else {
    const source = copySource(layer, write.source.id, write.source.at);
    if (typeof source === "string") return refusals.uncopyable(i, record.id, source);
    content = { kind: "base", version: source.version, value: source.value };
  }
  const currentOnly = isCurrentOnly(record);
  layer.createDocument(record.id, record, seq, currentOnly, {
    version: content.version,
    value: content.value,
    deltasSinceBase: 0,
  });
  writes.push(
    write.type === "document.create"
      ? { type: "document.create", index: i, record, content, currentOnly }
      : {
          type: "document.create",
          index: i,
          record,
          content,
          currentOnly,
          copiedFrom: { id: write.source.id, at: write.source.at },
        },
  );
  return undefined;
}

/** The value a copy starts from, or why there is none. */
function copySource(layer: PlanLayer, id: number, at: number | "current"): CurrentValue | string {
  const doc = layer.document(id);
  if (doc === undefined) return uncopyable.missing(id);
  if (at === "current") {
    if (doc.retiredAt !== undefined) return uncopyable.notLive(id, at);
    return layer.current(id);
  }
  if (at > layer.lastSeq) return uncopyable.notCommitted(at, layer.lastSeq);
  if (!isLiveAt(doc, at)) return uncopyable.notLive(id, at);
  // A current-only document keeps no history: the read rule of `document(id, at)`.
  if (doc.currentOnly && doc.retiredAt !== undefined)
    return uncopyable.unreadable(id, at, historyRetired(id, at, doc.retiredAt).message);
  if (doc.currentOnly && at < doc.newestBaseSeq)
    return uncopyable.unreadable(id, at, historyUnavailable(id, at, doc.newestBaseSeq).message);
  try {
    return layer.valueAt(id, at);
  } catch (error) {
    if (error instanceof StorageRequestError) return uncopyable.unreadable(id, at, error.message);
    throw error;
  }
}

function planChange(
  layer: PlanLayer,
  write: Extract<StorageWrite, { type: "document.change" }>,
  i: number,
  seq: number,
  writes: PlannedWrite[],
): BatchProblem | undefined {
  const { id, content } = write;
  const doc = layer.document(id);
  if (doc === undefined) return refusals.unknownDocument(i, id);
  if (doc.retiredAt !== undefined) return refusals.retired(i, id, doc.retiredAt);
  let after: CurrentValue;
  if (content.kind === "base")
    after = { version: content.version, value: content.value, deltasSinceBase: 0 };
  else {
    const before = layer.current(id);
    if (content.version !== before.version)
      return refusals.versionCrossing(i, id, content.version, before.version);
    try {
      after = {
        version: content.version,
        value: applyOps(before.value, content.ops),
        deltasSinceBase: before.deltasSinceBase + 1,
      };
    } catch (error) {
      if (!(error instanceof InvalidOp)) throw error;
      return refusals.deltaDoesNotApply(i, id, error.message);
    }
  }
  layer.changeDocument(id, doc, after, content.kind === "base" ? seq : doc.newestBaseSeq);
  writes.push({
    type: "document.change",
    index: i,
    id,
    content,
    after,
    currentOnly: doc.currentOnly,
  });
  return undefined;
}
