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
} from "../../src/index.js";

type Receive = (index: number, seq: Seq) => void;
type ReadName =
  | "conversation"
  | "scanConversations"
  | "entry"
  | "latestHead"
  | "scanEntries"
  | "task"
  | "scanTasks"
  | "submission"
  | "scanSubmissions"
  | "submissionByRequest"
  | "findDocument"
  | "document"
  | "scanDocuments";

/**
 * A Storage port wrapper for fault injection: every call goes to a real
 * storage underneath unless a fault is armed. It records each commit call's
 * batch count, can slow commits down, replace one commit call's outcome,
 * and make mintId or a named read fail.
 */
export class FaultyStorage implements Storage {
  /** Batches per `commit` call, in call order. */
  readonly commitCalls: number[] = [];
  /** Seqs seen through `receive`, in order. */
  readonly seqs: number[] = [];
  commitDelayMs = 0;
  /** One-shot override of the next commit call (e.g. reject, or store a prefix and refuse). */
  nextCommit: ((batches: readonly Batch[], receive: Receive) => Promise<CommitResult>) | undefined;
  mintFault: Error | undefined;
  readFault: { name: ReadName; error: Error; times?: number } | undefined;
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

  mintId(options?: CallOptions): Promise<number> {
    if (this.mintFault !== undefined) return Promise.reject(this.mintFault);
    return this.inner.mintId(options);
  }

  private read<T>(name: ReadName, call: () => Promise<T>): Promise<T> {
    const fault = this.readFault;
    if (fault && fault.name === name) {
      if (fault.times !== undefined && --fault.times <= 0) this.readFault = undefined;
      return Promise.reject(fault.error);
    }
    return call();
  }

  conversation(id: ConversationId, o?: CallOptions) {
    return this.read("conversation", () => this.inner.conversation(id, o));
  }
  scanConversations(q: ConversationQuery, l: number, c?: Cursor, o?: CallOptions) {
    return this.read("scanConversations", () => this.inner.scanConversations(q, l, c, o));
  }
  entry(id: EntryId, o?: CallOptions) {
    return this.read("entry", () => this.inner.entry(id, o));
  }
  latestHead(id: ConversationId, at?: EntryId, o?: CallOptions) {
    return this.read("latestHead", () => this.inner.latestHead(id, at, o));
  }
  scanEntries(q: EntryQuery, l: number, c?: Cursor, o?: CallOptions) {
    return this.read("scanEntries", () => this.inner.scanEntries(q, l, c, o));
  }
  task(id: TaskId, o?: CallOptions) {
    return this.read("task", () => this.inner.task(id, o));
  }
  scanTasks(q: TaskQuery, l: number, c?: Cursor, o?: CallOptions) {
    return this.read("scanTasks", () => this.inner.scanTasks(q, l, c, o));
  }
  submission(id: SubmissionId, o?: CallOptions) {
    return this.read("submission", () => this.inner.submission(id, o));
  }
  scanSubmissions(q: SubmissionQuery, l: number, c?: Cursor, o?: CallOptions) {
    return this.read("scanSubmissions", () => this.inner.scanSubmissions(q, l, c, o));
  }
  submissionByRequest(id: ConversationId, r: string, o?: CallOptions) {
    return this.read("submissionByRequest", () => this.inner.submissionByRequest(id, r, o));
  }
  findDocument(a: DocumentAddress, at: Seq | "current", o?: CallOptions) {
    return this.read("findDocument", () => this.inner.findDocument(a, at, o));
  }
  document(id: DocumentId, at: Seq | "current", o?: CallOptions) {
    return this.read("document", () => this.inner.document(id, at, o));
  }
  scanDocuments(q: DocumentQuery, l: number, c?: Cursor, o?: CallOptions) {
    return this.read("scanDocuments", () => this.inner.scanDocuments(q, l, c, o));
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A storage whose close leaves the memory behind, so a new session or harness can reopen it (a restart). */
export class Survivor extends FaultyStorage {
  override close(): Promise<void> {
    return Promise.resolve();
  }
}
