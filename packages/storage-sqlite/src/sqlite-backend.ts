import type {
  ConversationRecord,
  DocumentAddress,
  DocumentRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "@durably/core";
import {
  KnownDocuments,
  type BatchPlan,
  type CommitCall,
  type CommitOutcome,
  type ConversationFilter,
  type DocumentFilter,
  type DocumentSnapshot,
  type EntryRange,
  type IdRange,
  type Order,
  type StorageBackend,
  type StorageCapabilities,
  type StoredEntry,
  type SubmissionFilter,
  type TaskFilter,
} from "@durably/core/storage";
import {
  applyCall,
  applyPlanned,
  firstBatchConflict,
  laterBatchConflict,
  type CallOutcome,
  type Counters,
  type Known,
} from "./apply-plans.js";
import { DocumentReads } from "./document-reads.js";
import { guarded } from "./driver-errors.js";
import { encodeCall } from "./encode-writes.js";
import { finalCheckpoint } from "./ownership.js";
import { RecordReads } from "./record-reads.js";
import { RowReader } from "./rows.js";
import type { Tip } from "./entry-chain.js";
import type { SqliteDatabase, SqliteStatements } from "./sqlite-database.js";
import type { SqliteView } from "./sqlite-view.js";

/**
 * The SQLite backend behind the checked front: a `commit` call is one
 * `BEGIN IMMEDIATE … COMMIT` that plans the batches against the rows, then
 * writes the plans; reads are range queries on the indexed tables. Every
 * row read back is verified against its checksum. Reads return parsed rows,
 * so the front need not copy them (`freshReads`).
 */
export class SqliteBackend implements StorageBackend {
  readonly name: string;
  readonly freshReads = true;
  readonly #db: SqliteDatabase;
  readonly #rows: RowReader;
  readonly #records: RecordReads;
  readonly #documents: DocumentReads;
  readonly #known: Known = {
    conversations: new Set(),
    documents: new KnownDocuments(),
    tips: new Map(),
  };
  #counters: Counters;
  #nextId: number;

  constructor(
    db: SqliteDatabase,
    readonly location: string,
    counters: Counters,
    readonly capabilities: StorageCapabilities,
  ) {
    this.name = `SQLite storage ${location}`;
    this.#db = db;
    this.#rows = new RowReader(location);
    this.#records = new RecordReads(db, this.#rows);
    this.#documents = new DocumentReads(db, this.#rows, this.#known.documents);
    this.#counters = counters;
    this.#nextId = Math.max(counters.persistedHighWater + 1, 2);
  }

  get database(): SqliteDatabase {
    return this.#db;
  }

  mintId(): number {
    return this.#nextId++;
  }

  async commit(call: CommitCall): Promise<CommitOutcome> {
    if (call.batches.length === 0) return { stored: 0 };
    // Serialised before the transaction, so the write lock is held for statements only.
    const encoded = encodeCall(call.batches);
    const counters = {
      ...this.#counters,
      highWater: Math.max(this.#counters.highWater, this.#nextId - 1),
    };
    let outcome: CallOutcome;
    try {
      outcome = await this.#transaction((db) =>
        applyCall(db, this.#rows, call, encoded, counters, this.#known),
      );
    } catch (error) {
      const first = firstBatchConflict(error);
      if (first !== undefined) return { stored: 0, conflict: first };
      const later = laterBatchConflict(error);
      if (later === undefined) throw error;
      // Rolled back whole: write the batches before the conflicting one again, from the same plans.
      outcome = await this.#transaction((db) =>
        applyPlanned(db, this.#rows, later, encoded, counters, this.#known),
      );
    }
    this.#counters = outcome.counters;
    if (outcome.counters.highWater >= this.#nextId) this.#nextId = outcome.counters.highWater + 1;
    this.#adopt(outcome.plans.slice(0, outcome.stored), outcome.view, outcome.tips);
    return outcome.conflict === undefined
      ? { stored: outcome.stored }
      : { stored: outcome.stored, conflict: outcome.conflict };
  }

  /**
   * One transaction of a commit call. When it fails, the tips known as
   * committed are forgotten: what the file holds after a failed `COMMIT` is
   * read again, not assumed.
   */
  async #transaction(work: (db: SqliteStatements) => CallOutcome): Promise<CallOutcome> {
    try {
      return await guarded(this.location, "committing", {}, () => this.#db.transaction(work));
    } catch (error) {
      this.#known.tips.clear();
      throw error;
    }
  }

  /** Remembers what the stored plans made true: their conversations, their documents' states, the tips. */
  #adopt(plans: readonly BatchPlan[], view: SqliteView, tips: ReadonlyMap<number, Tip>): void {
    const { conversations, documents } = this.#known;
    // Bounded memory: forgetting known conversations or tips only costs a lookup later.
    if (conversations.size > 65_536) conversations.clear();
    if (this.#known.tips.size > 65_536) this.#known.tips.clear();
    for (const [id, tip] of tips) this.#known.tips.set(id, tip);
    for (const plan of plans) {
      for (const w of plan.writes) if (w.type === "conversation") conversations.add(w.value.id);
      documents.adopt(plan, (id) => view.answered.get(id));
    }
  }

  conversation(id: number): Promise<ConversationRecord | undefined> {
    return this.#records.conversation(id);
  }

  scanConversations(filter: ConversationFilter, range: IdRange): Promise<ConversationRecord[]> {
    return this.#records.scanConversations(filter, range);
  }

  entry(id: number): Promise<StoredEntry | undefined> {
    return this.#records.entry(id);
  }

  scanEntries(ranges: readonly EntryRange[], order: Order, limit: number): Promise<EntryRecord[]> {
    return this.#records.scanEntries(ranges, order, limit);
  }

  latestHead(ranges: readonly EntryRange[]): Promise<EntryRecord | undefined> {
    return this.#records.latestHead(ranges);
  }

  task(id: number): Promise<TaskRecord | undefined> {
    return this.#records.task(id);
  }

  scanTasks(filter: TaskFilter, range: IdRange): Promise<TaskRecord[]> {
    return this.#records.scanTasks(filter, range);
  }

  submission(id: number): Promise<SubmissionRecord | undefined> {
    return this.#records.submission(id);
  }

  scanSubmissions(filter: SubmissionFilter, range: IdRange): Promise<SubmissionRecord[]> {
    return this.#records.scanSubmissions(filter, range);
  }

  submissionByRequest(
    conversationId: number,
    requestId: string,
  ): Promise<SubmissionRecord | undefined> {
    return this.#records.submissionByRequest(conversationId, requestId);
  }

  findDocument(
    address: DocumentAddress,
    at: number | "current",
  ): Promise<DocumentRecord | undefined> {
    return this.#documents.findDocument(address, at);
  }

  document(id: number, at: number | "current"): Promise<DocumentSnapshot | undefined> {
    return this.#documents.document(id, at);
  }

  scanDocuments(filter: DocumentFilter, range: IdRange): Promise<DocumentRecord[]> {
    return this.#documents.scanDocuments(filter, range);
  }

  /**
   * Checkpoints the write-ahead log into the file and truncates it, then
   * releases the file. If the checkpoint fails (a disk error), the file is
   * still released and close rejects with `StorageIOError` (or
   * `StorageCorrupted`): the commits stay in the log, which the next open
   * replays.
   */
  async close(): Promise<void> {
    const failure = this.capabilities.persistent
      ? await finalCheckpoint(this.#db, this.location)
      : undefined;
    await guarded(this.location, "closing", {}, () => this.#db.close());
    if (failure !== undefined) throw failure;
  }
}
