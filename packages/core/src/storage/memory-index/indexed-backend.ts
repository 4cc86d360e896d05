import type {
  ConversationRecord,
  DocumentRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../../domain/records.js";
import type {
  CommitCall,
  CommitOutcome,
  ConversationFilter,
  DocumentFilter,
  DocumentSnapshot,
  IdRange,
  Maybe,
  StorageBackend,
  StoredEntry,
  SubmissionFilter,
  TaskFilter,
} from "../backend.js";
import type { EntryRange } from "../ancestry.js";
import type { StoredRevision } from "../materialize.js";
import type { CurrentValue, PlanDocument, PlanView } from "../plan-types.js";
import { isHistoryKept, isLiveAt } from "../lifetimes.js";
import type { DocumentAddress, Order, StorageCapabilities } from "../port.js";
import * as reads from "./index-reads.js";
import type { IndexedDocument, MemoryIndex } from "./memory-index.js";

/**
 * The planner's view of an index, reading it live. `valueAt` answers the
 * historical values copies ask for (the index keeps only current values).
 */
export function indexPlanView<R>(
  index: MemoryIndex<R>,
  valueAt: (id: number, at: number) => CurrentValue,
): PlanView {
  return {
    get lastSeq() {
      return index.lastSeq;
    },
    hasConversation: (id) => index.conversations.has(id),
    hasEntry: (id) => index.entries.has(id),
    document: (id): PlanDocument | undefined => {
      const doc = index.documents.get(id);
      return (
        doc && {
          createdAt: doc.record.createdAt,
          retiredAt: doc.record.retiredAt,
          currentOnly: doc.currentOnly,
          newestBaseSeq: doc.newestBaseSeq,
        }
      );
    },
    current: (id) => (index.documents.get(id) as IndexedDocument<R>).current as CurrentValue,
    liveAt: (address) => index.liveAt(address),
    valueAt,
  };
}

/**
 * A `StorageBackend` whose records live in a `MemoryIndex`: every read, the
 * planner's view and `mintId` come from the index. A subclass stores
 * (`commit`), says how to read a document's older revisions (`history`,
 * `valueAt`) and closes.
 */
export abstract class IndexedBackend<R extends { seq: number }> implements StorageBackend {
  abstract readonly name: string;
  abstract readonly capabilities: StorageCapabilities;

  constructor(protected readonly index: MemoryIndex<R>) {}

  abstract commit(call: CommitCall): Maybe<CommitOutcome>;
  abstract close(): Promise<void>;

  /**
   * The revisions of `doc` a read at seq `at` needs (the newest base at or
   * before it and its deltas up to it), and where they are. Asked only when
   * the current value does not answer.
   */
  protected abstract history(
    doc: IndexedDocument<R>,
    at: number,
  ): Maybe<{ revisions: readonly StoredRevision[]; where?: string }>;

  /** The planner's `valueAt`: a stored document's value at a past seq, synchronously. */
  protected abstract valueAt(id: number, at: number): CurrentValue;

  #view: PlanView | undefined;

  /** The planner's view of what the index holds (one object: it reads the index live). */
  protected planView(): PlanView {
    return (this.#view ??= indexPlanView(this.index, (id, at) => this.valueAt(id, at)));
  }

  mintId(): number {
    this.index.highWater += 1;
    return this.index.highWater;
  }

  conversation(id: number): ConversationRecord | undefined {
    return this.index.conversations.get(id);
  }

  scanConversations(filter: ConversationFilter, range: IdRange): ConversationRecord[] {
    return reads.scanConversations(this.index, filter, range);
  }

  entry(id: number): StoredEntry | undefined {
    return this.index.entries.get(id);
  }

  scanEntries(ranges: readonly EntryRange[], order: Order, limit: number): EntryRecord[] {
    return reads.scanEntries(this.index, ranges, order, limit);
  }

  latestHead(ranges: readonly EntryRange[]): EntryRecord | undefined {
    return reads.latestHead(this.index, ranges);
  }

  task(id: number): TaskRecord | undefined {
    return this.index.tasks.get(id);
  }

  scanTasks(filter: TaskFilter, range: IdRange): TaskRecord[] {
    return reads.scanTasks(this.index, filter, range);
  }

  submission(id: number): SubmissionRecord | undefined {
    return this.index.submissions.get(id);
  }

  scanSubmissions(filter: SubmissionFilter, range: IdRange): SubmissionRecord[] {
    return reads.scanSubmissions(this.index, filter, range);
  }

  submissionByRequest(conversationId: number, requestId: string): SubmissionRecord | undefined {
    return reads.submissionByRequest(this.index, conversationId, requestId);
  }

  findDocument(address: DocumentAddress, at: number | "current"): DocumentRecord | undefined {
    return reads.findDocument(this.index, address, at);
  }

  scanDocuments(filter: DocumentFilter, range: IdRange): DocumentRecord[] {
    return reads.scanDocuments(this.index, filter, range);
  }

  document(id: number, at: number | "current"): Maybe<DocumentSnapshot | undefined> {
    const doc = this.index.documents.get(id);
    if (doc === undefined) return undefined;
    const { record, newestBaseSeq, current } = doc;
    const bare = { record, newestBaseSeq };
    if (!isLiveAt(record, at)) return bare;
    // The current value answers any read at or after the newest revision.
    const newest = doc.revisions[doc.revisions.length - 1]?.seq ?? record.createdAt;
    if (current !== undefined && (at === "current" || at >= newest))
      return { record, newestBaseSeq, value: current };
    // History that is not kept: the front rejects the read from the record alone.
    if (
      at === "current" ||
      !isHistoryKept({ ...record, currentOnly: doc.currentOnly, newestBaseSeq }, at)
    )
      return bare;
    const found = this.history(doc, at);
    if (found instanceof Promise) return found.then((h) => ({ ...bare, ...h }));
    return { ...bare, ...found };
  }
}
