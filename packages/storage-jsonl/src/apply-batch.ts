import type { DocumentRecord, SubmissionRecord } from "@durably/core";
import { documentFile } from "./line-format.js";
import {
  addressKey,
  isCurrentOnly,
  requestKey,
  type JsonlState,
  type RevisionRef,
} from "./jsonl-state.js";
import type { PreparedBatch } from "./prepare-batch.js";
import { insertId, removeId } from "@durably/core";
import { scopeKey } from "@durably/core";

/** Where a write's sidecar record sits (for document content). */
export interface Placement {
  offset: number;
  length: number;
  line: number;
}

/**
 * Applies a prepared batch to the index under its seq. Cannot fail: every
 * check ran in `prepareBatch`. `placements[i]` locates write i's sidecar
 * record, when it has one that is still on disk.
 */
export function applyBatch(
  state: JsonlState,
  batch: PreparedBatch,
  placements: readonly (Placement | undefined)[],
): void {
  const seq = batch.seq;
  const retires: number[] = [];
  const ref = (i: number, base: boolean): RevisionRef | undefined => {
    const at = placements[i];
    return at && { seq, base, offset: at.offset, length: at.length, line: at.line };
  };
  batch.writes.forEach((write, i) => {
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
        const record = write.record;
        const revision = write.base && ref(i, true);
        state.documents.set(record.id, {
          record,
          currentOnly: isCurrentOnly(record),
          file: documentFile(record.id),
          current: write.base && { version: write.base.version, value: write.base.value },
          deltasSinceBase: 0,
          newestBaseSeq: seq,
          revisions: revision ? [revision] : [],
        });
        pushToIndex(state.addresses, addressKey(record), record.id);
        pushToIndex(state.scopes, scopeKey(record.scope), record.id);
        break;
      }
      case "document.change": {
        const doc = state.documents.get(write.id);
        if (doc === undefined) break;
        doc.current = write.current;
        if (write.content === undefined) break; // reclaimed on disk; a later base replaces it
        const base = write.content.kind === "base";
        const revision = ref(i, base);
        if (base) {
          doc.newestBaseSeq = seq;
          doc.deltasSinceBase = 0;
          // Current-only: the revisions before the newest base are never read again.
          if (doc.currentOnly) doc.revisions = [];
        } else doc.deltasSinceBase += 1;
        if (revision) doc.revisions.push(revision);
        break;
      }
      case "document.retire":
        retires.push(write.id);
        break;
    }
  });
  // Retirement takes effect after every content write of the batch.
  for (const id of retires) {
    const doc = state.documents.get(id);
    if (doc === undefined) continue;
    doc.record = { ...doc.record, retiredAt: seq } as DocumentRecord;
    doc.current = undefined;
    if (doc.currentOnly) doc.revisions = [];
  }
  state.lastSeq = seq;
  if (batch.highestId > state.highWater) state.highWater = batch.highestId;
}

function putSubmission(state: JsonlState, submission: SubmissionRecord): void {
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
