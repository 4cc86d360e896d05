import type {
  Batch,
  CallOptions,
  CommitResult,
  ConversationId,
  ConversationQuery,
  ConversationRecord,
  Cursor,
  DocumentAddress,
  DocumentId,
  DocumentQuery,
  DocumentRecord,
  EntryId,
  EntryQuery,
  EntryRecord,
  MaterializedDocument,
  Page,
  Seq,
  Storage,
  StorageCapabilities,
  SubmissionId,
  SubmissionQuery,
  SubmissionRecord,
  TaskId,
  TaskQuery,
  TaskRecord,
} from "@durably/core";
import { STEP_ENTRY_KIND, stepOfEntry } from "./workload.js";

/** `[committer, step]` of a step commit's batch, `null` for any other batch. */
export type BatchTag = [number, number] | null;

export function tagBatch(batch: Batch): BatchTag {
  for (const write of batch) {
    if (write.type !== "entry" || write.value.kind !== STEP_ENTRY_KIND) continue;
    const mark = stepOfEntry(write.value);
    if (mark !== undefined) return [mark.committer, mark.step];
  }
  return null;
}

/**
 * Passes every call through to the backend, and watches `commit`: before the
 * call it hands the batches' tags to `announce` (the child waits until the
 * parent has them, so a kill can never hide a commit that was attempted), and
 * it records the seq `receive` reports for each step batch.
 */
export class ObservedStorage implements Storage {
  readonly capabilities: StorageCapabilities | undefined;
  private readonly seqs = new Map<string, number>();

  constructor(
    private readonly inner: Storage,
    private readonly announce: (tags: BatchTag[]) => Promise<void> = () => Promise.resolve(),
  ) {
    this.capabilities = inner.capabilities;
  }

  /** The seq storage gave the batch of `committer`'s `step`, if it reported one. */
  seqOf(committer: number, step: number): number | undefined {
    const key = `${committer}:${step}`;
    const seq = this.seqs.get(key);
    this.seqs.delete(key);
    return seq;
  }

  async commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    const tags = batches.map(tagBatch);
    await this.announce(tags);
    return this.inner.commit(
      batches,
      (index, seq) => {
        const tag = tags[index];
        if (tag) this.seqs.set(`${tag[0]}:${tag[1]}`, seq);
        receive(index, seq);
      },
      options,
    );
  }

  mintId(options?: CallOptions): Promise<number> {
    return this.inner.mintId(options);
  }
  conversation(id: ConversationId, options?: CallOptions): Promise<ConversationRecord | undefined> {
    return this.inner.conversation(id, options);
  }
  scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<ConversationRecord>> {
    return this.inner.scanConversations(query, limit, cursor, options);
  }
  entry(
    id: EntryId,
    options?: CallOptions,
  ): Promise<{ entry: EntryRecord; commitSeq: Seq } | undefined> {
    return this.inner.entry(id, options);
  }
  latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
    options?: CallOptions,
  ): Promise<EntryRecord | undefined> {
    return this.inner.latestHead(conversationId, atOrBefore, options);
  }
  scanEntries(
    query: EntryQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<EntryRecord>> {
    return this.inner.scanEntries(query, limit, cursor, options);
  }
  task(id: TaskId, options?: CallOptions): Promise<TaskRecord | undefined> {
    return this.inner.task(id, options);
  }
  scanTasks(
    query: TaskQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<TaskRecord>> {
    return this.inner.scanTasks(query, limit, cursor, options);
  }
  submission(id: SubmissionId, options?: CallOptions): Promise<SubmissionRecord | undefined> {
    return this.inner.submission(id, options);
  }
  scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<SubmissionRecord>> {
    return this.inner.scanSubmissions(query, limit, cursor, options);
  }
  submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
    options?: CallOptions,
  ): Promise<SubmissionRecord | undefined> {
    return this.inner.submissionByRequest(conversationId, requestId, options);
  }
  findDocument(
    address: DocumentAddress,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<DocumentRecord | undefined> {
    return this.inner.findDocument(address, at, options);
  }
  document(
    id: DocumentId,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<MaterializedDocument | undefined> {
    return this.inner.document(id, at, options);
  }
  scanDocuments(
    query: DocumentQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<DocumentRecord>> {
    return this.inner.scanDocuments(query, limit, cursor, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
