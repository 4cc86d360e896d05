import {
  historyUnavailable,
  materializeRevisions,
  scopeKey,
  StorageRequestError,
  type DocumentAddress,
  type DocumentRecord,
  type Json,
  type MaterializedDocument,
  type StoredRevision,
} from "@durably/core";
import { upperBoundBySeq } from "./revisions.js";

/** One incarnation of a document and the revisions kept for it. */
export interface DocumentState {
  record: DocumentRecord;
  /** Seq-ascending. Current-only documents keep only the newest base and its tail. */
  revisions: StoredRevision[];
  newestBaseSeq: number;
  /** The current value, kept so a delta can be checked against it at write time. */
  current: { version: number; value: Json };
  /** True unless the document is conversation-scoped with history "rewindable". */
  currentOnly: boolean;
}

export function isCurrentOnly(record: Pick<DocumentRecord, "scope" | "history">): boolean {
  return record.scope.kind !== "conversation" || record.history !== "rewindable";
}

/** The string identifying `(kind, scope, key)`; an absent key differs from every string key. */
export function addressKey(address: DocumentAddress): string {
  return JSON.stringify([address.kind, scopeKey(address.scope), address.key ?? null]);
}

export function isLive(record: DocumentRecord, at: number | "current"): boolean {
  if (at === "current") return record.retiredAt === undefined;
  return record.createdAt <= at && (record.retiredAt === undefined || at < record.retiredAt);
}

/**
 * The incarnation's value at `at` (already known to be live there): newest
 * base at or before `at` plus its deltas up to `at`. The result shares
 * structure with stored revisions; callers copy it before handing it out.
 */
export function readAt(state: DocumentState, at: number | "current"): MaterializedDocument {
  const id = state.record.id;
  if (state.currentOnly && at !== "current") {
    if (state.record.retiredAt !== undefined)
      throw new StorageRequestError(
        "history-unavailable",
        `document ${id} keeps only its current value and was retired at seq ${state.record.retiredAt}: seq ${at} is no longer readable`,
      );
    if (at < state.newestBaseSeq) throw historyUnavailable(id, at, state.newestBaseSeq);
  }
  const end = at === "current" ? state.revisions.length : upperBoundBySeq(state.revisions, at);
  let start = end - 1;
  while (start > 0 && state.revisions[start]?.content.kind !== "base") start--;
  const tail = state.revisions.slice(Math.max(start, 0), end);
  const { version, value, deltasSinceBase } = materializeRevisions(id, tail, "memory storage");
  return { record: state.record, version, value, deltasSinceBase };
}
