import {
  StorageRequestError,
  type Batch,
  type DocumentRecord,
  type NewDocumentRecord,
  type StorageWrite,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import { type BatchProblem } from "@durably/core/storage";
import { findLive, readDocument, revisionKeys } from "./documents.js";
import { K, pad } from "./keys.js";
import {
  currentOnly,
  decodeDocumentState,
  decodeSubmission,
  decodeTask,
  taskSummary,
  type DocumentState,
} from "./records.js";
import type { View } from "./view.js";

/**
 * Plans one batch (already shape-checked) as key-value writes into the
 * view's top layer, or returns why it is refused. All checks read through
 * the view, so a batch sees the writes of the earlier batches of its call and
 * its own earlier writes. Retirements are planned after every content write
 * of the batch (contract rule 1).
 */
export async function planBatch(
  batch: Batch,
  seq: number,
  view: View,
): Promise<BatchProblem | undefined> {
  for (let i = 0; i < batch.length; i++) {
    const write = batch[i] as StorageWrite;
    if (write.type === "document.retire") continue;
    const problem = await planWrite(write, i, seq, view);
    if (problem) return problem;
  }
  for (let i = 0; i < batch.length; i++) {
    const write = batch[i] as StorageWrite;
    if (write.type !== "document.retire") continue;
    const problem = await planRetire(write.id, i, seq, view);
    if (problem) return problem;
  }
  return undefined;
}

const problem = (
  writeIndex: number,
  reason: BatchProblem["reason"],
  message: string,
): BatchProblem => ({
  writeIndex,
  reason,
  message,
});

async function conversationExists(view: View, id: number): Promise<boolean> {
  return (await view.get(K.conversation(id), id)) !== undefined;
}

async function documentState(view: View, id: number): Promise<DocumentState | undefined> {
  return view.decoded(K.document(id), id, decodeDocumentState);
}

async function planWrite(
  write: StorageWrite,
  i: number,
  seq: number,
  view: View,
): Promise<BatchProblem | undefined> {
  switch (write.type) {
    case "conversation": {
      const c = write.value;
      if (await conversationExists(view, c.id))
        return problem(i, "immutable-record", `conversation ${c.id} is already stored`);
      if (c.parent && !(await conversationExists(view, c.parent.conversationId)))
        return problem(
          i,
          "unknown-conversation",
          `conversation ${c.id} forks from unknown conversation ${c.parent.conversationId}`,
        );
      view.put(K.conversation(c.id), JSON.stringify(c));
      if (c.owner) view.put(K.conversationsByOwner(c.owner.taskId) + pad(c.id), "");
      return undefined;
    }
    case "entry": {
      const e = write.value;
      if ((await view.get(K.entryHome(e.id), e.id)) !== undefined)
        return problem(i, "immutable-record", `entry ${e.id} is already stored`);
      if (!(await conversationExists(view, e.conversationId)))
        return problem(
          i,
          "unknown-conversation",
          `entry ${e.id} names unknown conversation ${e.conversationId}`,
        );
      view.put(K.entry(e.conversationId, e.id), `{"seq":${seq},"entry":${JSON.stringify(e)}}`);
      view.put(K.entryHome(e.id), pad(e.conversationId));
      if (e.head !== undefined) view.put(K.heads(e.conversationId) + pad(e.id), "");
      return undefined;
    }
    case "task": {
      const t = write.value;
      if (!(await conversationExists(view, t.conversationId)))
        return problem(
          i,
          "unknown-conversation",
          `task ${t.id} names unknown conversation ${t.conversationId}`,
        );
      const key = K.task(t.id);
      const raw = await view.get(key, t.id);
      replaceIndexKeys(
        view,
        raw === undefined ? [] : taskIndexKeys(decodeTask(key, raw)),
        taskIndexKeys(t),
        taskSummary(t),
      );
      view.put(key, JSON.stringify(t));
      return undefined;
    }
    case "submission": {
      const s = write.value;
      if (!(await conversationExists(view, s.conversationId)))
        return problem(
          i,
          "unknown-conversation",
          `submission ${s.id} names unknown conversation ${s.conversationId}`,
        );
      const key = K.submission(s.id);
      const raw = await view.get(key, s.id);
      const old = raw === undefined ? [] : submissionIndexKeys(decodeSubmission(key, raw));
      const next = submissionIndexKeys(s);
      for (const k of old) if (!next.includes(k)) view.del(k);
      view.put(next[0] as string, JSON.stringify({ s: s.status }));
      if (next[1] !== undefined) view.put(next[1], "");
      view.put(key, JSON.stringify(s));
      return undefined;
    }
    case "document.create":
    case "document.copy": {
      const r = write.record;
      if ((await documentState(view, r.id)) !== undefined)
        return problem(i, "duplicate-id", `document ${r.id} already exists`);
      const occupant = await findLive(view, addressPrefix(r), "current");
      if (occupant)
        return problem(
          i,
          "address-occupied",
          `document ${r.id}: its address is held by live document ${occupant.id}`,
        );
      let content: { kind: "base"; version: number; value: unknown };
      if (write.type === "document.create") content = write.content;
      else {
        const { id: sourceId, at } = write.source;
        const source = await documentState(view, sourceId);
        const value = source ? await materializeSource(view, source, at) : undefined;
        if (!value)
          return problem(
            i,
            "unknown-document",
            `document ${r.id} copies document ${sourceId}, which has no value at ${String(at)}`,
          );
        content = { kind: "base", version: value.version, value: value.value };
      }
      const record = newRecord(r, seq);
      putDocument(view, { record, version: content.version, base: seq }, true);
      view.put(K.revision(r.id, seq), JSON.stringify(content));
      return undefined;
    }
    case "document.change": {
      const state = await documentState(view, write.id);
      if (!state) return problem(i, "unknown-document", `document ${write.id} is unknown`);
      if (state.record.retiredAt !== undefined)
        return problem(
          i,
          "retired-document",
          `document ${write.id} was retired at seq ${state.record.retiredAt}`,
        );
      const content = write.content;
      if (content.kind === "delta" && content.version !== state.version)
        return problem(
          i,
          "version-crossing",
          `document ${write.id} is at version ${state.version}, the delta is version ${content.version}`,
        );
      view.put(K.revision(write.id, seq), JSON.stringify(content));
      if (content.kind === "base") {
        // A new base makes a current-only document's older revisions unreadable: reclaim them in this same write.
        if (currentOnly(state.record))
          for (const key of await revisionKeys(view, write.id, seq)) view.del(key);
        putDocument(view, { record: state.record, version: content.version, base: seq }, false);
      }
      return undefined;
    }
    case "document.retire":
      return undefined;
  }
}

async function planRetire(
  id: number,
  i: number,
  seq: number,
  view: View,
): Promise<BatchProblem | undefined> {
  const state = await documentState(view, id);
  if (!state) return problem(i, "unknown-document", `document ${id} is unknown`);
  if (state.record.retiredAt !== undefined)
    return problem(
      i,
      "retired-document",
      `document ${id} was retired at seq ${state.record.retiredAt}`,
    );
  const record: DocumentRecord = { ...state.record, retiredAt: seq as DocumentRecord["createdAt"] };
  // A retired current-only incarnation can never be read again: reclaim all its revisions.
  if (currentOnly(record)) for (const key of await revisionKeys(view, id)) view.del(key);
  putDocument(view, { record, version: state.version, base: state.base }, true);
  return undefined;
}

/** A copy's source value at `at`; `undefined` when it is not live or not materialisable there. */
async function materializeSource(view: View, source: DocumentState, at: number | "current") {
  try {
    return await readDocument(view, source, at);
  } catch (error) {
    if (error instanceof StorageRequestError) return undefined;
    throw error;
  }
}

function newRecord(r: NewDocumentRecord, seq: number): DocumentRecord {
  const record = { ...r, createdAt: seq } as DocumentRecord & { retiredAt?: unknown };
  delete record.retiredAt;
  return record;
}

function addressPrefix(r: { kind: string; scope: DocumentRecord["scope"]; key?: string }): string {
  return K.documentsAt(r.kind, r.scope, r.key);
}

/** Writes `d/<id>` and, when the record changed, its `da/` and `ds/` index entries. */
function putDocument(view: View, state: DocumentState, recordChanged: boolean): void {
  const { record } = state;
  view.put(K.document(record.id), JSON.stringify(state));
  if (!recordChanged) return;
  const json = JSON.stringify(record);
  view.put(addressPrefix(record) + pad(record.id), json);
  view.put(K.documentsIn(record.scope) + pad(record.id), json);
}

function taskIndexKeys(t: TaskRecord): string[] {
  const id = pad(t.id);
  const keys = [
    K.tasksByConversation(t.conversationId) + id,
    K.tasksByKind(t.kind) + id,
    K.tasksByStatus(t.state.status) + id,
  ];
  if (t.owner !== undefined) keys.push(K.tasksByOwner(t.owner) + id);
  return keys;
}

/** `[sc/ key, sr/ key?]` */
function submissionIndexKeys(s: SubmissionRecord): string[] {
  const id = pad(s.id);
  const keys = [K.submissionsByConversation(s.conversationId) + id];
  if (s.requestId !== undefined)
    keys.push(K.submissionsByRequest(s.conversationId, s.requestId) + id);
  return keys;
}

/** Replaces a record's index keys: stale ones are deleted, current ones (re)written with `value`. */
function replaceIndexKeys(
  view: View,
  old: readonly string[],
  next: readonly string[],
  value: string,
): void {
  for (const key of old) if (!next.includes(key)) view.del(key);
  for (const key of next) view.put(key, value);
}
