import type { CommitCall, CommitOutcome, Maybe } from "@durably/core/storage";
import {
  historyAt,
  IndexedBackend,
  MemoryIndex,
  materializeRevisions,
  type ContentWrite,
  type CurrentValue,
  type IndexedDocument,
  type StoredRevision,
} from "@durably/core/storage";

const WHERE = "memory storage";

/** Keeps every revision's content as is (the planner's copies, never handed out). */
function keep(write: ContentWrite, seq: number): StoredRevision {
  return { seq, content: write.content };
}

const isBase = (revision: StoredRevision) => revision.content.kind === "base";

/**
 * The memory backend: a `MemoryIndex` that keeps document revisions as
 * values. A commit call plans every batch against the index, then applies
 * the plans, all synchronously: nothing else can run in between.
 */
export class MemoryBackend extends IndexedBackend<StoredRevision> {
  readonly name = WHERE;
  readonly capabilities = Object.freeze({ persistent: false });

  constructor() {
    super(new MemoryIndex<StoredRevision>());
  }

  commit(call: CommitCall): Maybe<CommitOutcome> {
    const plans = call.plan(this.planView(), this.index.lastSeq + 1);
    for (const plan of plans) this.index.apply(plan, keep);
    return { stored: plans.length };
  }

  protected history(doc: IndexedDocument<StoredRevision>, at: number) {
    return { revisions: historyAt(doc.revisions, at, isBase), where: WHERE };
  }

  protected valueAt(id: number, at: number): CurrentValue {
    const doc = this.index.documents.get(id) as IndexedDocument<StoredRevision>;
    return materializeRevisions(id, this.history(doc, at).revisions, WHERE);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
