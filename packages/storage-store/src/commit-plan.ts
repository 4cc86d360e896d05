import type { DocumentRecord, SubmissionRecord, TaskRecord } from "@durably/core";
import type { BatchPlan, PlannedWrite } from "@durably/core/storage";
import { revisionKeys } from "./documents.js";
import { K, pad } from "./keys.js";
import {
  decodeDocumentState,
  decodeSubmission,
  decodeTask,
  taskSummary,
  type DocumentState,
} from "./records.js";
import type { View } from "./view.js";

/**
 * Writes one planned batch as key-value puts and deletes into the view's top
 * layer. The planner already decided the batch is stored; this only lays
 * out its keys. Reads go through the view, so a batch sees the writes of the
 * earlier batches of its call (the old index keys of a task an earlier batch
 * replaced, the state of a document it changed). Returns a promise only when
 * one of its writes reads first (a task, a submission, a new base, a
 * retirement): entries and deltas are laid out without a promise each.
 */
export function writePlan(plan: BatchPlan, view: View): Promise<void> | undefined {
  const { writes, seq } = plan;
  for (let i = 0; i < writes.length; i++) {
    // Most writes only lay out keys: the batch goes asynchronous only at a write that reads.
    const reading = writeOne(writes[i] as PlannedWrite, seq, view);
    if (reading !== undefined) return writeRest(reading, writes, i + 1, seq, view);
  }
  return undefined;
}

async function writeRest(
  reading: Promise<void>,
  writes: readonly PlannedWrite[],
  from: number,
  seq: number,
  view: View,
): Promise<void> {
  await reading;
  for (let i = from; i < writes.length; i++) await writeOne(writes[i] as PlannedWrite, seq, view);
}

function documentState(view: View, id: number): Promise<DocumentState | undefined> {
  return view.decoded(K.document(id), id, decodeDocumentState);
}

/** Lays out one write's keys; returns a promise only when the write reads stored values first. */
function writeOne(write: PlannedWrite, seq: number, view: View): Promise<void> | undefined {
  switch (write.type) {
    case "conversation": {
      const c = write.value;
      view.put(K.conversation(c.id), JSON.stringify(c));
      if (c.owner) view.put(K.conversationsByOwner(c.owner.taskId) + pad(c.id), "");
      return;
    }
    case "entry": {
      const e = write.value;
      view.put(K.entry(e.conversationId, e.id), `{"seq":${seq},"entry":${JSON.stringify(e)}}`);
      view.put(K.entryHome(e.id), pad(e.conversationId));
      if (e.head != null) view.put(K.heads(e.conversationId) + pad(e.id), "");
      return;
    }
    case "task":
      return writeTask(write.value, view);
    case "submission":
      return writeSubmission(write.value, view);
    case "document.create": {
      const { record, content } = write;
      putDocument(view, { record, version: content.version, base: seq }, true);
      view.put(K.revision(record.id, seq), JSON.stringify(content));
      return;
    }
    case "document.change": {
      const { id, content } = write;
      view.put(K.revision(id, seq), JSON.stringify(content));
      if (content.kind !== "base") return;
      return writeBase(id, content.version, write.currentOnly, seq, view);
    }
    case "document.retire":
      return writeRetire(write.id, write.currentOnly, seq, view);
  }
}

async function writeTask(t: TaskRecord, view: View): Promise<void> {
  const key = K.task(t.id);
  const raw = await view.get(key, t.id);
  replaceIndexKeys(
    view,
    raw === undefined ? [] : taskIndexKeys(decodeTask(key, raw)),
    taskIndexKeys(t),
    taskSummary(t),
  );
  view.put(key, JSON.stringify(t));
}

async function writeSubmission(s: SubmissionRecord, view: View): Promise<void> {
  const key = K.submission(s.id);
  const raw = await view.get(key, s.id);
  const old = raw === undefined ? [] : submissionIndexKeys(decodeSubmission(key, raw));
  const next = submissionIndexKeys(s);
  for (const k of old) if (!next.includes(k)) view.del(k);
  view.put(next[0] as string, JSON.stringify({ s: s.status }));
  if (next[1] !== undefined) view.put(next[1], "");
  view.put(key, JSON.stringify(s));
}

/** A new base governs the document from `seq`: its state moves there. */
async function writeBase(
  id: number,
  version: number,
  currentOnly: boolean,
  seq: number,
  view: View,
): Promise<void> {
  // A new base makes a current-only document's older revisions unreadable: reclaim them in this same write.
  if (currentOnly) for (const key of await revisionKeys(view, id, seq)) view.del(key);
  const state = (await documentState(view, id)) as DocumentState;
  putDocument(view, { record: state.record, version, base: seq }, false);
}

async function writeRetire(
  id: number,
  currentOnly: boolean,
  seq: number,
  view: View,
): Promise<void> {
  const state = (await documentState(view, id)) as DocumentState;
  const record: DocumentRecord = { ...state.record, retiredAt: seq as DocumentRecord["createdAt"] };
  // A retired current-only incarnation can never be read again: reclaim all its revisions.
  if (currentOnly) for (const key of await revisionKeys(view, id)) view.del(key);
  putDocument(view, { record, version: state.version, base: state.base }, true);
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
