import type { DocumentScope, SubmissionStatus, TaskStatus } from "../domain/records.js";
import type {
  ConversationRecord,
  DocumentRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";
import type { EntryRange } from "./ancestry.js";
import type { StoredRevision } from "./materialize.js";
import type { Batch, DocumentAddress, Order, StorageCapabilities } from "./port.js";
import type { BatchPlan, CurrentValue, PlanNeeds, PlanView, WriteConflict } from "./plan-types.js";

/** A value now, or later. Backends over memory answer synchronously and spare a promise. */
export type Maybe<T> = T | Promise<T>;

/**
 * Where one page of a scan starts and how much it may hold: ids after
 * `after` (exclusive) in `order`, at most `limit` items.
 */
export interface IdRange {
  order: Order;
  after: number | undefined;
  limit: number;
}

export interface ConversationFilter {
  ownerTaskId?: number;
}

/** Equality on each field present. */
export interface TaskFilter {
  conversationId?: number;
  kind?: string;
  status?: TaskStatus;
  abortRequested?: boolean;
  background?: boolean;
  owner?: number;
}

export interface SubmissionFilter {
  conversationId: number;
  status?: SubmissionStatus;
}

/** Incarnations of `scope` live at `at`, of `kind` when given. */
export interface DocumentFilter {
  scope: DocumentScope;
  at: number | "current";
  kind?: string;
}

/** An entry and the seq of the batch that stored it. */
export interface StoredEntry {
  entry: EntryRecord;
  commitSeq: number;
}

/**
 * What a backend knows of one document incarnation for a read at `at`. The
 * front decides from `record` and `newestBaseSeq` whether the read is
 * allowed, then takes `value` or materialises `revisions`.
 */
export interface DocumentSnapshot {
  record: DocumentRecord;
  /** Seq of the newest base: current-only documents cannot be read before it. */
  newestBaseSeq: number;
  /** The value at `at`, when the backend has it at hand (typically the current value). */
  value?: CurrentValue;
  /**
   * Otherwise, the newest base at or before `at` and the deltas after it up
   * to `at`, seq-ascending. May be left out when the incarnation is not live
   * at `at` or the read is of reclaimed history.
   */
  revisions?: readonly StoredRevision[];
  /** Where the revisions are (a file, a table), named in a corruption report. */
  where?: string;
}

/** What one `commit` call hands a backend: detached, shape-checked batches and the planner. */
export interface CommitCall {
  /**
   * The batches to store, detached from the caller (do not mutate them).
   * Empty for an empty call or when the first batch failed detachment: store
   * nothing then; `plan` may be skipped.
   */
  readonly batches: readonly Batch[];
  /** What `plan` will ask the view (computed once, on first use). */
  needs(): PlanNeeds;
  /**
   * Checks every batch against `view` (the state stored before this call)
   * plus the call's earlier batches, with seqs `firstSeq`, `firstSeq + 1`, …,
   * and returns the plans of the batches before the first refused one (the
   * front reports the refusal). Call it once per call.
   */
  plan(view: PlanView, firstSeq: number): readonly BatchPlan[];
}

/** How a backend's commit ended: the first `stored` plans are stored, or a uniqueness failed at apply. */
export interface CommitOutcome {
  stored: number;
  /** Batch `stored` hit a uniqueness the backend enforces at apply time; it and later ones are not stored. */
  conflict?: WriteConflict;
}

/**
 * The narrow interface a storage backend implements; `CheckedStorage` puts
 * the `Storage` port in front of it. The front has already checked every
 * argument (ids are positive safe integers, queries well formed, cursors
 * decoded to ids), serialises `commit` calls, guards against use after
 * `close`, copies values in and (unless `freshReads`) out, expands fork
 * ancestry into id ranges and decides every refusal. A backend stores and
 * reads; it never refuses a batch on its own.
 */
export interface StorageBackend {
  /** Names the storage in messages: `memory storage`, `JSONL storage /data/app`. */
  readonly name: string;
  readonly capabilities?: StorageCapabilities;
  /** True when every read returns objects made for that call (parsed rows), so the front need not copy them. */
  readonly freshReads?: boolean;
  /** Why the backend can no longer be used (it saw an uncertain write), if so; every call then rejects with it. */
  failure?(): Error | undefined;

  /** A fresh id: never 1, never an id of a stored record (across reopen), never twice. */
  mintId(): Maybe<number>;
  /**
   * Plans the call (`call.plan(view, firstSeq)`) and stores every plan it
   * returns atomically, in order, each under its seq (one transaction, one
   * append, one atomic write where the backend has one). Rejecting means the
   * outcome is uncertain.
   */
  commit(call: CommitCall): Maybe<CommitOutcome>;

  conversation(id: number): Maybe<ConversationRecord | undefined>;
  scanConversations(filter: ConversationFilter, range: IdRange): Maybe<ConversationRecord[]>;
  entry(id: number): Maybe<StoredEntry | undefined>;
  /** Entries in `ranges`, walked in turn (they are disjoint and already in scan order), at most `limit`. */
  scanEntries(ranges: readonly EntryRange[], order: Order, limit: number): Maybe<EntryRecord[]>;
  /** The entry with the greatest id that has a `head` field, in the first range (newest first) that has one. */
  latestHead(ranges: readonly EntryRange[]): Maybe<EntryRecord | undefined>;
  task(id: number): Maybe<TaskRecord | undefined>;
  scanTasks(filter: TaskFilter, range: IdRange): Maybe<TaskRecord[]>;
  submission(id: number): Maybe<SubmissionRecord | undefined>;
  scanSubmissions(filter: SubmissionFilter, range: IdRange): Maybe<SubmissionRecord[]>;
  /** The submission of that conversation with that request id, lowest id first. */
  submissionByRequest(
    conversationId: number,
    requestId: string,
  ): Maybe<SubmissionRecord | undefined>;
  /** The incarnation at the address live at `at` (the newest one created at or before `at` may be returned; the front checks). */
  findDocument(address: DocumentAddress, at: number | "current"): Maybe<DocumentRecord | undefined>;
  document(id: number, at: number | "current"): Maybe<DocumentSnapshot | undefined>;
  scanDocuments(filter: DocumentFilter, range: IdRange): Maybe<DocumentRecord[]>;

  /** Releases what the backend holds. Called once, after every commit call settled. */
  close(): Promise<void>;
}
