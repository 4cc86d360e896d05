import type {
  ConversationId,
  DocumentId,
  EntryId,
  Seq,
  SubmissionId,
  TaskId,
} from "../domain/ids.js";
import type { Json, JsonObject } from "../domain/json.js";
import type { Op } from "../domain/ops.js";
import type {
  ConversationRecord,
  DocumentRecord,
  DocumentScope,
  EntryRecord,
  NewDocumentRecord,
  SubmissionRecord,
  SubmissionStatus,
  TaskRecord,
  TaskStatus,
} from "../domain/records.js";

export type BaseContent = { kind: "base"; version: number; value: Json };
export type DeltaContent = { kind: "delta"; version: number; ops: Op[] };
export type DocumentContent = BaseContent | DeltaContent;

/**
 * One write of a batch. Writes apply in order, except that a
 * `document.retire` takes effect after every content write of its batch.
 */
export type StorageWrite =
  | { type: "conversation"; value: ConversationRecord }
  | { type: "entry"; value: EntryRecord }
  | { type: "task"; value: TaskRecord }
  | { type: "submission"; value: SubmissionRecord }
  | { type: "document.create"; record: NewDocumentRecord; content: BaseContent }
  /** A new incarnation whose base is the source's value at `at` (a seq, or "current" including earlier writes of the call). */
  | {
      type: "document.copy";
      record: NewDocumentRecord;
      source: { id: DocumentId; at: Seq | "current" };
    }
  | { type: "document.change"; id: DocumentId; content: DocumentContent }
  | { type: "document.retire"; id: DocumentId };

export type StorageWriteType = StorageWrite["type"];
export type Batch = readonly StorageWrite[];

/** Opaque JSON object owned by the backend; only round-trips to the same query. */
export type Cursor = JsonObject;
export type Page<T> = { items: T[]; next?: Cursor };
export type Order = "ascending" | "descending";

export interface ConversationQuery {
  /** Only conversations owned by this task. */
  ownerTaskId?: TaskId;
  order?: Order;
}

export interface EntryQuery {
  conversationId: ConversationId;
  /** Inclusive bounds on entry id. */
  minEntryId?: EntryId;
  maxEntryId?: EntryId;
  /** Default "descending" (newest first). */
  order?: Order;
}

export interface TaskQuery {
  conversationId?: ConversationId;
  kind?: string;
  status?: TaskStatus;
  abortRequested?: boolean;
  background?: boolean;
  /** Only tasks owned by this task. */
  owner?: TaskId;
  order?: Order;
}

export interface SubmissionQuery {
  conversationId: ConversationId;
  status?: SubmissionStatus;
  order?: Order;
}

export interface DocumentAddress {
  kind: string;
  scope: DocumentScope;
  key?: string;
}

export interface DocumentQuery {
  scope: DocumentScope;
  at: Seq | "current";
  kind?: string;
  order?: Order;
}

export interface MaterializedDocument {
  record: DocumentRecord;
  version: number;
  value: Json;
  /** Deltas applied on top of the newest base to produce `value`. */
  deltasSinceBase: number;
}

export interface CommitResult {
  /** How many batches, from the first, were stored. */
  stored: number;
  /** Why batch `stored` was refused (a `BatchRefused`); later batches were not attempted. */
  refused?: Error;
}

/** Optional behaviour an adapter declares; the contract suite tests what is declared. */
export interface StorageCapabilities {
  /** Data survives close and reopen. */
  readonly persistent?: boolean;
}

export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * The driven port every backend implements (the rules: RULES.md of @durably/contract-tests). Reads return
 * detached copies; `commit` copies what it keeps.
 */
export interface Storage {
  readonly capabilities?: StorageCapabilities;

  /**
   * Stores batches in order, each whole or not at all, each with its own
   * seq reported through `receive(index, seq)` before the promise resolves.
   * Rejecting means the outcome is uncertain (the session fails).
   */
  commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult>;

  /** A fresh id: never 1, never an id of a committed record (across reopen), never returned twice by one instance. */
  mintId(options?: CallOptions): Promise<number>;

  conversation(id: ConversationId, options?: CallOptions): Promise<ConversationRecord | undefined>;
  scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<ConversationRecord>>;

  entry(
    id: EntryId,
    options?: CallOptions,
  ): Promise<{ entry: EntryRecord; commitSeq: Seq } | undefined>;
  /** Newest entry carrying a `head` marker visible from the conversation (fork ancestry included), at or before `atOrBefore`. */
  latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
    options?: CallOptions,
  ): Promise<EntryRecord | undefined>;
  /** Entries visible from the conversation: its own plus its ancestors' up to each fork point. */
  scanEntries(
    query: EntryQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<EntryRecord>>;

  task(id: TaskId, options?: CallOptions): Promise<TaskRecord | undefined>;
  scanTasks(
    query: TaskQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<TaskRecord>>;

  submission(id: SubmissionId, options?: CallOptions): Promise<SubmissionRecord | undefined>;
  scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<SubmissionRecord>>;
  submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
    options?: CallOptions,
  ): Promise<SubmissionRecord | undefined>;

  /** The incarnation at this address that was live at `at` (created at or before, not yet retired). */
  findDocument(
    address: DocumentAddress,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<DocumentRecord | undefined>;
  /**
   * The value at `at`: newest base at or before `at` plus its delta tail.
   * `undefined` when the incarnation does not exist or is not live at `at`.
   * A current-only document read before its newest base rejects with
   * `StorageRequestError` ("history-unavailable"), whether or not the
   * backend has physically reclaimed those revisions yet.
   */
  document(
    id: DocumentId,
    at: Seq | "current",
    options?: CallOptions,
  ): Promise<MaterializedDocument | undefined>;
  /** Incarnations of the scope live at `at`, by id. */
  scanDocuments(
    query: DocumentQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<DocumentRecord>>;

  /** Idempotent. Later calls reject with `StorageClosed`. */
  close(): Promise<void>;
}
