import type {
  ConversationRecord,
  DocumentRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../../domain/records.js";
import type { StoredEntry } from "../backend.js";
import type { BatchPlan, CurrentValue, PlannedWrite } from "../plan-types.js";
import { addressKey } from "../lifetimes.js";
import { scopeKey } from "../scope.js";
import { addToIndex, removeFromIndex, Table } from "./table.js";

/**
 * One document incarnation as an in-memory index holds it. `R` is how a
 * backend keeps a revision: the content itself, or where it sits in a file.
 */
export interface IndexedDocument<R> {
  record: DocumentRecord;
  currentOnly: boolean;
  /** The current value; `undefined` once retired. */
  current: CurrentValue | undefined;
  newestBaseSeq: number;
  /** Rewindable: every revision. Current-only: the newest base and its tail, none once retired. */
  revisions: R[];
}

/** A write that carries document content, for which a backend may keep a revision. */
export type ContentWrite = Extract<PlannedWrite, { type: "document.create" | "document.change" }>;

/** Makes the revision a backend keeps for a content write stored under `seq` (or none). */
export type RevisionMaker<R> = (write: ContentWrite, seq: number) => R | undefined;

/**
 * Every record of a storage held in memory, with the sorted id indexes its
 * scans walk: the tables, the document incarnations with their current
 * values, and `apply`, which stores a planned batch. Shared by the memory
 * backend (which keeps revisions as values) and the JSONL backend (which
 * keeps where they sit in its files). Values here are private; never hand
 * them out uncopied.
 */
export class MemoryIndex<R> {
  /** Seq of the newest stored batch (0 before the first). */
  lastSeq = 0;
  /** Highest id minted or stored; the root id 1 is reserved from the start. */
  highWater = 1;
  readonly conversations = new Table<ConversationRecord>(() => undefined);
  readonly entries = new Table<StoredEntry>(
    (row) => row.entry.conversationId,
    (id, stored) => this.reviveEntry(id, stored),
  );
  /** Per conversation, ascending ids of its entries that carry a `head`. */
  readonly heads = new Map<number, number[]>();
  readonly tasks = new Table<TaskRecord>((row) => row.conversationId);
  readonly submissions = new Table<SubmissionRecord>((row) => row.conversationId);
  /** `requestKey(conversationId, requestId)` to ascending submission ids. */
  readonly requests = new Map<string, number[]>();
  readonly documents = new Map<number, IndexedDocument<R>>();
  /** Address key to every incarnation created there, ascending. */
  readonly addresses = new Map<string, number[]>();
  /** Scope key to every incarnation in that scope, ascending. */
  readonly scopes = new Map<string, number[]>();

  /** The live incarnation at an address, if any. */
  liveAt(address: Parameters<typeof addressKey>[0]): number | undefined {
    const ids = this.addresses.get(addressKey(address));
    if (ids === undefined) return undefined;
    // Incarnations at one address never overlap in time: only the newest can be live.
    const newest = this.documents.get(ids[ids.length - 1] as number);
    return newest !== undefined && newest.record.retiredAt === undefined
      ? newest.record.id
      : undefined;
  }

  /** Stores a planned batch under its seq. Cannot fail: the planner checked everything. */
  apply(plan: BatchPlan, revision: RevisionMaker<R>): void {
    const seq = plan.seq;
    for (const write of plan.writes) {
      switch (write.type) {
        case "conversation":
          this.conversations.put(write.value.id, write.value);
          break;
        case "entry":
          this.putEntry(write.value, seq);
          break;
        case "task":
          this.tasks.put(write.value.id, write.value);
          break;
        case "submission":
          this.putSubmission(write.value);
          break;
        case "document.create": {
          const { record, content } = write;
          const first = revision(write, seq);
          this.documents.set(record.id, {
            record,
            currentOnly: write.currentOnly,
            current: { version: content.version, value: content.value, deltasSinceBase: 0 },
            newestBaseSeq: seq,
            revisions: first === undefined ? [] : [first],
          });
          addToIndex(this.addresses, addressKey(record), record.id);
          addToIndex(this.scopes, scopeKey(record.scope), record.id);
          break;
        }
        case "document.change": {
          const doc = this.documents.get(write.id) as IndexedDocument<R>;
          doc.current = write.after;
          if (write.content.kind === "base") {
            doc.newestBaseSeq = seq;
            // Current-only: the revisions before the newest base are never read again.
            if (doc.currentOnly) doc.revisions = [];
          }
          const made = revision(write, seq);
          if (made !== undefined) doc.revisions.push(made);
          break;
        }
        case "document.retire": {
          const doc = this.documents.get(write.id) as IndexedDocument<R>;
          doc.record = { ...doc.record, retiredAt: seq } as DocumentRecord;
          doc.current = undefined;
          if (doc.currentOnly) doc.revisions = [];
          break;
        }
      }
    }
    this.lastSeq = seq;
    if (plan.highestId > this.highWater) this.highWater = plan.highestId;
  }

  /**
   * Stores one entry committed at `commitSeq`, as `apply` does for an entry
   * write; for a backend rebuilding its index from many stored entries (one
   * call each, with no plan to build).
   */
  putEntry(entry: EntryRecord, commitSeq: number): void {
    this.entries.put(entry.id, { entry, commitSeq });
    if (entry.head != null) addToIndex(this.heads, entry.conversationId, entry.id);
  }

  /**
   * Stores one entry in the backend's own stored form (a string), as
   * `putEntry` would store the entry `reviveEntry(id, stored)` gives back:
   * for a backend rebuilding its index from many stored entries, which then
   * keeps a string per entry instead of the entry's objects until it is
   * read. The backend has checked `stored` already; `conversationId` and
   * `head` (whether the entry carries one) are the entry's.
   */
  putStoredEntry(id: number, conversationId: number, head: boolean, stored: string): void {
    this.entries.putStored(id, stored, conversationId);
    if (head) addToIndex(this.heads, conversationId, id);
  }

  /**
   * The entry `putStoredEntry` stored as `stored`, on its first read. An
   * index that stores entries that way overrides it; the same `stored` must
   * always give an equal entry.
   */
  protected reviveEntry(id: number, stored: string): StoredEntry {
    throw new Error(
      `entry ${id} was stored as ${stored.length} characters, but this index revives none`,
    );
  }

  private putSubmission(submission: SubmissionRecord): void {
    const old = this.submissions.get(submission.id);
    if (old?.requestId !== undefined)
      removeFromIndex(this.requests, requestKey(old.conversationId, old.requestId), old.id);
    this.submissions.put(submission.id, submission);
    if (submission.requestId !== undefined)
      addToIndex(
        this.requests,
        requestKey(submission.conversationId, submission.requestId),
        submission.id,
      );
  }
}

export function requestKey(conversationId: number, requestId: string): string {
  return `${conversationId}:${requestId}`;
}

/**
 * The revisions a read at seq `at` needs, out of seq-ascending `revisions`:
 * the newest base at or before `at` and the deltas after it up to `at`.
 */
export function historyAt<R extends { seq: number }>(
  revisions: readonly R[],
  at: number,
  isBase: (revision: R) => boolean,
): R[] {
  let end = 0;
  let hi = revisions.length;
  while (end < hi) {
    const mid = (end + hi) >>> 1;
    if ((revisions[mid] as R).seq <= at) end = mid + 1;
    else hi = mid;
  }
  let start = end - 1;
  while (start > 0 && !isBase(revisions[start] as R)) start--;
  return revisions.slice(Math.max(start, 0), end);
}
