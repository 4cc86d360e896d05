import type {
  Batch,
  CallOptions,
  CommitResult,
  ConversationId,
  ConversationQuery,
  Cursor,
  DocumentAddress,
  DocumentId,
  DocumentQuery,
  EntryId,
  EntryQuery,
  Seq,
  Storage,
  SubmissionId,
  SubmissionQuery,
  TaskId,
  TaskQuery,
} from "@durably/core";

type Receive = (index: number, seq: Seq) => void;

/**
 * Fault injection through the Storage port: the adapter under test does the
 * real work; this wrapper only counts commit calls, slows them down, or
 * replaces one call's outcome / one read's result when a scenario asks.
 */
export class FaultInjector implements Storage {
  readonly commitCalls: number[] = [];
  readonly seqs: number[] = [];
  commitDelayMs = 0;
  nextCommit: ((batches: readonly Batch[], receive: Receive) => Promise<CommitResult>) | undefined;
  failScanEntriesWith: Error | undefined;
  readonly capabilities;

  constructor(readonly inner: Storage) {
    this.capabilities = inner.capabilities;
  }

  async commit(
    batches: readonly Batch[],
    receive: Receive,
    options?: CallOptions,
  ): Promise<CommitResult> {
    this.commitCalls.push(batches.length);
    const record: Receive = (index, seq) => {
      this.seqs.push(seq);
      receive(index, seq);
    };
    if (this.commitDelayMs > 0)
      await new Promise((resolve) => setTimeout(resolve, this.commitDelayMs));
    const override = this.nextCommit;
    if (override) {
      this.nextCommit = undefined;
      return override(batches, record);
    }
    return this.inner.commit(batches, record, options);
  }

  mintId(o?: CallOptions) {
    return this.inner.mintId(o);
  }
  conversation(id: ConversationId, o?: CallOptions) {
    return this.inner.conversation(id, o);
  }
  scanConversations(q: ConversationQuery, l: number, c?: Cursor, o?: CallOptions) {
    return this.inner.scanConversations(q, l, c, o);
  }
  entry(id: EntryId, o?: CallOptions) {
    return this.inner.entry(id, o);
  }
  latestHead(id: ConversationId, at?: EntryId, o?: CallOptions) {
    return this.inner.latestHead(id, at, o);
  }
  scanEntries(q: EntryQuery, l: number, c?: Cursor, o?: CallOptions) {
    const fault = this.failScanEntriesWith;
    if (fault) {
      this.failScanEntriesWith = undefined;
      return Promise.reject(fault);
    }
    return this.inner.scanEntries(q, l, c, o);
  }
  task(id: TaskId, o?: CallOptions) {
    return this.inner.task(id, o);
  }
  scanTasks(q: TaskQuery, l: number, c?: Cursor, o?: CallOptions) {
    return this.inner.scanTasks(q, l, c, o);
  }
  submission(id: SubmissionId, o?: CallOptions) {
    return this.inner.submission(id, o);
  }
  scanSubmissions(q: SubmissionQuery, l: number, c?: Cursor, o?: CallOptions) {
    return this.inner.scanSubmissions(q, l, c, o);
  }
  submissionByRequest(id: ConversationId, r: string, o?: CallOptions) {
    return this.inner.submissionByRequest(id, r, o);
  }
  findDocument(a: DocumentAddress, at: Seq | "current", o?: CallOptions) {
    return this.inner.findDocument(a, at, o);
  }
  document(id: DocumentId, at: Seq | "current", o?: CallOptions) {
    return this.inner.document(id, at, o);
  }
  scanDocuments(q: DocumentQuery, l: number, c?: Cursor, o?: CallOptions) {
    return this.inner.scanDocuments(q, l, c, o);
  }
  close() {
    return this.inner.close();
  }
}
