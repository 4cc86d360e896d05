import type { ConversationId, EntryId, Seq, SubmissionId, TaskId } from "../domain/ids.js";
import type {
  ConversationRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";
import type {
  CallOptions,
  ConversationQuery,
  Cursor,
  EntryQuery,
  Page,
  Storage,
  SubmissionQuery,
  TaskQuery,
} from "../storage/port.js";

/**
 * Table reads outside a commit: what storage holds (stored commits only;
 * deferred commits with table writes are stored first). Values are the
 * storage's detached copies. A `StorageRequestError` (bad cursor, limit,
 * query) fails only that read.
 */
export class SessionReader {
  constructor(
    private readonly storage: Storage,
    private readonly ready: () => Promise<void>,
  ) {}

  async conversation(
    id: ConversationId,
    options?: CallOptions,
  ): Promise<ConversationRecord | undefined> {
    await this.ready();
    return this.storage.conversation(id, options);
  }

  async entry(
    id: EntryId,
    options?: CallOptions,
  ): Promise<{ entry: EntryRecord; commitSeq: Seq } | undefined> {
    await this.ready();
    return this.storage.entry(id, options);
  }

  async task(id: TaskId, options?: CallOptions): Promise<TaskRecord | undefined> {
    await this.ready();
    return this.storage.task(id, options);
  }

  async submission(id: SubmissionId, options?: CallOptions): Promise<SubmissionRecord | undefined> {
    await this.ready();
    return this.storage.submission(id, options);
  }

  async submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
    options?: CallOptions,
  ): Promise<SubmissionRecord | undefined> {
    await this.ready();
    return this.storage.submissionByRequest(conversationId, requestId, options);
  }

  async latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
    options?: CallOptions,
  ): Promise<EntryRecord | undefined> {
    await this.ready();
    return this.storage.latestHead(conversationId, atOrBefore, options);
  }

  async scanEntries(
    query: EntryQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<EntryRecord>> {
    await this.ready();
    return this.storage.scanEntries(query, limit, cursor, options);
  }

  async scanTasks(
    query: TaskQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<TaskRecord>> {
    await this.ready();
    return this.storage.scanTasks(query, limit, cursor, options);
  }

  async scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<ConversationRecord>> {
    await this.ready();
    return this.storage.scanConversations(query, limit, cursor, options);
  }

  async scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<SubmissionRecord>> {
    await this.ready();
    return this.storage.scanSubmissions(query, limit, cursor, options);
  }
}
