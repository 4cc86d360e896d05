import {
  applyOps,
  checkBatchShape,
  copyJson,
  highestId,
  InvalidOp,
  scopeKey,
  StorageRequestError,
  type BaseContent,
  type BatchProblem,
  type ConversationRecord,
  type DocumentContent,
  type EntryRecord,
  type Json,
  type NewDocumentRecord,
  type StorageWrite,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import { addressKey, isCurrentOnly, isLive, readAt, type DocumentState } from "./documents.js";
import { requestKey, type MemoryState } from "./memory-state.js";
import { insertId, removeId } from "@durably/core";

type Current = { version: number; value: Json };

/** A write after every check, with whatever it needs to apply without failing. */
type PreparedWrite =
  | { type: "conversation"; value: ConversationRecord }
  | { type: "entry"; value: EntryRecord }
  | { type: "task"; value: TaskRecord }
  | { type: "submission"; value: SubmissionRecord }
  | { type: "document.new"; record: NewDocumentRecord; base: BaseContent }
  | { type: "document.change"; id: number; content: DocumentContent; current: Current }
  | { type: "document.retire"; id: number };

export interface PreparedBatch {
  writes: PreparedWrite[];
  highestId: number;
}

function problem(
  writeIndex: number,
  reason: BatchProblem["reason"],
  message: string,
): { problem: BatchProblem } {
  return { problem: { writeIndex, reason, message } };
}

/**
 * Copies a batch (detaching it from the caller) and runs every check that
 * can refuse it against the stored state plus the batch's own earlier
 * writes. Nothing is changed: a refused batch leaves no trace. A batch the
 * Session sealed (`sealed`, see `isSealedBatches`) holds deeply frozen
 * values it already checked: it is kept as it is, not copied and checked
 * for strict JSON a second time (nothing here changes a stored value in
 * place: document ops copy the path they change).
 */
export function prepareBatch(
  state: MemoryState,
  input: unknown,
  batchIndex: number,
  sealed = false,
): { batch: PreparedBatch } | { problem: BatchProblem } {
  if (!Array.isArray(input))
    return problem(0, "invalid-write", "a batch must be an array of writes");
  let batch: StorageWrite[];
  if (sealed) batch = input as StorageWrite[];
  else {
    batch = [];
    for (let i = 0; i < input.length; i++) {
      try {
        batch.push(copyJson(input[i], `batches[${batchIndex}][${i}]`) as unknown as StorageWrite);
      } catch (error) {
        if (!(error instanceof TypeError)) throw error;
        return problem(i, "invalid-write", error.message);
      }
    }
  }
  const shape = checkBatchShape(batch);
  if (shape !== undefined) return { problem: shape };

  const newConversations = new Set<number>();
  const newDocuments = new Set<number>();
  const newAddresses = new Set<string>();
  /** Current values after this batch's earlier content writes (created, copied or changed). */
  const batchCurrent = new Map<number, Current>();
  const retiring = new Set<number>();
  const writes: PreparedWrite[] = [];
  const knownConversation = (id: number) => state.conversations.has(id) || newConversations.has(id);

  for (let i = 0; i < batch.length; i++) {
    const write = batch[i] as StorageWrite;
    switch (write.type) {
      case "conversation": {
        const { id, parent } = write.value;
        if (knownConversation(id))
          return problem(i, "immutable-record", `conversation ${id} is already stored`);
        if (parent !== undefined && !knownConversation(parent.conversationId))
          return problem(
            i,
            "unknown-conversation",
            `conversation ${id} forks from unknown conversation ${parent.conversationId}`,
          );
        newConversations.add(id);
        writes.push(write);
        break;
      }
      case "entry": {
        const { id, conversationId } = write.value;
        if (state.entries.has(id))
          return problem(i, "immutable-record", `entry ${id} is already stored`);
        if (!knownConversation(conversationId))
          return problem(
            i,
            "unknown-conversation",
            `entry ${id} names unknown conversation ${conversationId}`,
          );
        writes.push(write);
        break;
      }
      case "task":
      case "submission": {
        const { id, conversationId } = write.value;
        if (!knownConversation(conversationId))
          return problem(
            i,
            "unknown-conversation",
            `${write.type} ${id} names unknown conversation ${conversationId}`,
          );
        writes.push(write);
        break;
      }
      case "document.create":
      case "document.copy": {
        const record = write.record;
        if (state.documents.has(record.id) || newDocuments.has(record.id))
          return problem(i, "duplicate-id", `document ${record.id} already exists`);
        const address = addressKey(record);
        const occupant = liveAt(state, address);
        if (occupant !== undefined || newAddresses.has(address))
          return problem(
            i,
            "address-occupied",
            `document ${record.id}: ${describeAddress(record)} already has live document ${occupant ?? "created earlier in this batch"}`,
          );
        let base: BaseContent;
        if (write.type === "document.create") base = write.content;
        else {
          const source = copySource(state, batchCurrent, write.source.id, write.source.at);
          if (typeof source === "string")
            return problem(i, "unknown-document", `document ${record.id} copy: ${source}`);
          base = { kind: "base", version: source.version, value: source.value };
        }
        newDocuments.add(record.id);
        batchCurrent.set(record.id, { version: base.version, value: base.value });
        newAddresses.add(address);
        writes.push({ type: "document.new", record, base });
        break;
      }
      case "document.change": {
        const { id, content } = write;
        const stored = state.documents.get(id);
        if (stored === undefined)
          return problem(i, "unknown-document", `document ${id} does not exist`);
        if (stored.record.retiredAt !== undefined)
          return problem(
            i,
            "retired-document",
            `document ${id} was retired at seq ${stored.record.retiredAt}`,
          );
        if (content.kind === "base") {
          const current = { version: content.version, value: content.value };
          batchCurrent.set(id, current);
          writes.push({ type: "document.change", id, content, current });
          break;
        }
        if (content.version !== stored.current.version)
          return problem(
            i,
            "version-crossing",
            `document ${id}: a delta for version ${content.version} on version ${stored.current.version} (a version change needs a base)`,
          );
        let value: Json;
        try {
          value = applyOps(stored.current.value, content.ops);
        } catch (error) {
          if (!(error instanceof InvalidOp)) throw error;
          // Storing it would leave a document that can never be read again.
          return problem(
            i,
            "invalid-write",
            `document ${id} delta does not apply to its current value: ${error.message}`,
          );
        }
        batchCurrent.set(id, { version: content.version, value });
        writes.push({
          type: "document.change",
          id,
          content,
          current: { version: content.version, value },
        });
        break;
      }
      case "document.retire": {
        const { id } = write;
        const stored = state.documents.get(id);
        if (stored === undefined && !newDocuments.has(id))
          return problem(i, "unknown-document", `document ${id} does not exist`);
        if (stored?.record.retiredAt !== undefined)
          return problem(
            i,
            "retired-document",
            `document ${id} was retired at seq ${stored.record.retiredAt}`,
          );
        if (retiring.has(id))
          return problem(i, "retired-document", `document ${id} is retired twice in one batch`);
        retiring.add(id);
        writes.push(write);
        break;
      }
    }
  }
  return { batch: { writes, highestId: highestId(batch) } };
}

function describeAddress(record: NewDocumentRecord): string {
  const key = record.key === undefined ? "no key" : `key ${JSON.stringify(record.key)}`;
  return `address (kind ${JSON.stringify(record.kind)}, scope ${scopeKey(record.scope)}, ${key})`;
}

function liveAt(state: MemoryState, address: string): number | undefined {
  for (const id of state.addresses.get(address) ?? []) {
    const doc = state.documents.get(id);
    if (doc !== undefined && doc.record.retiredAt === undefined) return id;
  }
  return undefined;
}

/** The copy source's value, or a string saying why it cannot be copied. */
function copySource(
  state: MemoryState,
  batchCurrent: ReadonlyMap<number, Current>,
  id: number,
  at: number | "current",
): Current | string {
  if (at === "current") {
    const pending = batchCurrent.get(id);
    if (pending !== undefined) return pending;
  }
  const source = state.documents.get(id);
  if (source === undefined) return `source document ${id} does not exist`;
  if (at !== "current" && at > state.lastSeq)
    return `source seq ${at} is not committed yet (newest seq is ${state.lastSeq})`;
  if (!isLive(source.record, at))
    return `source document ${id} is not live at ${at === "current" ? "current" : `seq ${at}`}`;
  if (at === "current") return source.current;
  try {
    const read = readAt(source, at);
    return { version: read.version, value: read.value };
  } catch (error) {
    if (error instanceof StorageRequestError)
      return `source document ${id} at seq ${at}: ${error.message}`;
    throw error;
  }
}

/** Applies a prepared batch under `seq`. Cannot fail: every check ran in `prepareBatch`. */
export function applyBatch(state: MemoryState, batch: PreparedBatch, seq: number): void {
  const retires: number[] = [];
  for (const write of batch.writes) {
    switch (write.type) {
      case "conversation":
        state.conversations.put(write.value.id, write.value);
        break;
      case "entry": {
        const entry = write.value;
        state.entries.put(entry.id, { entry, commitSeq: seq });
        if ("head" in entry) {
          let heads = state.heads.get(entry.conversationId);
          if (heads === undefined) state.heads.set(entry.conversationId, (heads = []));
          insertId(heads, entry.id);
        }
        break;
      }
      case "task":
        state.tasks.put(write.value.id, write.value);
        break;
      case "submission":
        putSubmission(state, write.value);
        break;
      case "document.new": {
        const record = { ...write.record, createdAt: seq } as DocumentState["record"];
        state.documents.set(record.id, {
          record,
          revisions: [{ seq, content: write.base }],
          newestBaseSeq: seq,
          current: { version: write.base.version, value: write.base.value },
          currentOnly: isCurrentOnly(record),
        });
        pushToIndex(state.addresses, addressKey(record), record.id);
        pushToIndex(state.scopes, scopeKey(record.scope), record.id);
        break;
      }
      case "document.change": {
        const doc = state.documents.get(write.id) as DocumentState;
        doc.current = write.current;
        if (write.content.kind === "base") {
          doc.newestBaseSeq = seq;
          // Current-only: the revisions before the newest base can never be read again.
          if (doc.currentOnly) doc.revisions = [];
        }
        doc.revisions.push({ seq, content: write.content });
        break;
      }
      case "document.retire":
        retires.push(write.id);
        break;
    }
  }
  // Retirement takes effect after every content write of the batch.
  for (const id of retires) {
    const doc = state.documents.get(id) as DocumentState;
    doc.record = { ...doc.record, retiredAt: seq } as DocumentState["record"];
    if (doc.currentOnly) doc.revisions = [];
  }
  state.lastSeq = seq;
  if (batch.highestId > state.highWater) state.highWater = batch.highestId;
}

function putSubmission(state: MemoryState, submission: SubmissionRecord): void {
  const old = state.submissions.get(submission.id);
  if (old?.requestId !== undefined) {
    const key = requestKey(old.conversationId, old.requestId);
    const ids = state.requests.get(key);
    if (ids !== undefined) {
      removeId(ids, old.id);
      if (ids.length === 0) state.requests.delete(key);
    }
  }
  state.submissions.put(submission.id, submission);
  if (submission.requestId !== undefined)
    pushToIndex(
      state.requests,
      requestKey(submission.conversationId, submission.requestId),
      submission.id,
    );
}

function pushToIndex(index: Map<string, number[]>, key: string, id: number): void {
  let ids = index.get(key);
  if (ids === undefined) index.set(key, (ids = []));
  insertId(ids, id);
}
