import { DraftRevoked, ReadAfterWrite, UnknownRecord } from "../domain/errors.js";
import type { ConversationId, DocumentId, EntryId, SubmissionId, TaskId } from "../domain/ids.js";
import type {
  ConversationRecord,
  EntryRecord,
  NewDocumentRecord,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";
import { entrySegments, type EntrySegment } from "../storage/ancestry.js";
import type { DocumentAddress, StorageWrite } from "../storage/port.js";
import type { DraftTracker } from "./draft.js";
import type { Kernel } from "./kernel.js";
import type { CommitInfo, DocState } from "./prepared.js";
import type { AnyDocToken } from "./tokens.js";

/** A document opened (read or created) by this transaction. */
export interface OpenDoc {
  readonly key: string;
  readonly address: DocumentAddress;
  readonly token: AnyDocToken;
  readonly basedOn: DocState;
  /** The incarnation written to: the existing one, or a new one created by this transaction. */
  readonly id: DocumentId;
  readonly record: NewDocumentRecord;
  readonly created: boolean;
  /** Stored at an older version: this commit writes a base at the token's version. */
  readonly migrated: boolean;
  readonly createdAt: number | undefined;
  readonly deltasSinceBase: number;
  readonly tracker: DraftTracker;
  retired: boolean;
}

export interface ForkCopyRequest {
  readonly child: ConversationId;
  readonly parent: ConversationId;
  readonly at: EntryId;
}

/** A retirement of an incarnation this transaction did not open. */
export interface Retirement {
  readonly address: DocumentAddress;
  readonly id: DocumentId;
  readonly basedOn: DocState;
}

export function unknown(what: string): never {
  throw new UnknownRecord(`${what} does not exist`);
}

export function checkId(what: string, id: unknown): void {
  if (!Number.isSafeInteger(id) || (id as number) < 1)
    throw new TypeError(`${what} must be a positive integer id, got ${String(id)}`);
}

/** True when `entry` lies in one of the id ranges a conversation's entry scan covers (its own or an ancestor's up to the fork point). */
export function visibleIn(
  segments: readonly EntrySegment[],
  entry: { readonly id: number; readonly conversationId: number },
): boolean {
  for (const s of segments)
    if (
      s.conversationId === entry.conversationId &&
      entry.id > s.minExclusive &&
      entry.id <= s.maxInclusive
    )
      return true;
  return false;
}

/** Documents a commit opens before they are indexed by key (most commits open one or two). */
const OPEN_LIST = 8;

const REVOKED = "the transaction was used after its commit callback settled";

/**
 * What one transaction has done so far, and the lookups its reads and write
 * checks share: this transaction's own records first, then prepared commits
 * (the overlay), then storage. The collections are created on first use: a
 * typical commit touches two or three of them.
 */
export class TransactionState {
  wroteTable = false;
  /** Set when the callback settled: no new operation may start, started ones may finish. */
  settled = false;
  /** Set when sealed or discarded: drafts and operations are dead. */
  revoked = false;
  readonly tableWrites: StorageWrite[] = [];
  /** The size counted for the table writes so far (bytes of JSON text, mostly upper bounds). */
  bytes = 0;
  taskWriteIndex: Map<number, number> | undefined;
  submissionWriteIndex: Map<number, number> | undefined;
  conversations: Map<number, ConversationRecord> | undefined;
  /** Entries appended, in order (few per commit: a list, searched by id). */
  entries: EntryRecord[] | undefined;
  tasks: Map<number, TaskRecord> | undefined;
  submissions: Map<number, SubmissionRecord> | undefined;
  /** Documents opened, in the order they were opened (see `openDoc`). */
  opened: OpenDoc[] | undefined;
  /** An index of `opened` by address key, once a commit opens more than a few. */
  private openIndex: Map<string, OpenDoc> | undefined;
  /** Opens waiting for storage, by address key (concurrent `doc` calls share one). */
  opening: Map<string, Promise<OpenDoc>> | undefined;
  /** Root drafts handed out by `replaceDoc`, to find their document again. */
  byDraft: Map<object, OpenDoc> | undefined;
  /** Retirements of incarnations not opened in this transaction, by address key. */
  retirements: Map<string, Retirement> | undefined;
  forks: ForkCopyRequest[] | undefined;
  terminalTasks: Set<number> | undefined;
  hooks: ((info: CommitInfo) => void)[] | undefined;

  constructor(
    readonly kernel: Kernel,
    readonly deferred: boolean,
  ) {}

  // ---- documents opened --------------------------------------------------------

  /** The document opened at address key `key`; a short list is searched, a long one indexed. */
  openDoc(key: string): OpenDoc | undefined {
    const opened = this.opened;
    if (opened === undefined) return undefined;
    if (this.openIndex !== undefined) return this.openIndex.get(key);
    for (const open of opened) if (open.key === key) return open;
    return undefined;
  }

  addOpen(open: OpenDoc): void {
    const opened = this.opened;
    if (opened === undefined) {
      this.opened = [open];
      return;
    }
    opened.push(open);
    if (this.openIndex !== undefined) this.openIndex.set(open.key, open);
    else if (opened.length > OPEN_LIST) this.openIndex = new Map(opened.map((o) => [o.key, o]));
  }

  // ---- guards ---------------------------------------------------------------

  use(): void {
    if (this.revoked || this.settled) throw new DraftRevoked(REVOKED);
    this.kernel.check();
  }

  beginRead(what: string): void {
    this.use();
    if (this.wroteTable)
      throw new ReadAfterWrite(
        `${what}: table reads must come before the transaction's first table write`,
      );
  }

  beginWrite(): void {
    this.use();
    this.wroteTable = true;
  }

  /** After an await: the callback may have settled meanwhile. */
  stillOpen(): void {
    if (this.revoked) throw new DraftRevoked(REVOKED);
  }

  // ---- lookups shared by reads and write checks -----------------------------

  /** A conversation this transaction, a prepared commit or the session already knows (no storage read). */
  localConversation(id: number): ConversationRecord | undefined {
    return (
      this.conversations?.get(id) ??
      this.kernel.overlay.conversations.get(id) ??
      this.kernel.knownConversation(id)
    );
  }

  /** A task this transaction or a prepared commit wrote (no storage read). */
  localTask(id: number): TaskRecord | undefined {
    return this.tasks?.get(id) ?? this.kernel.overlay.tasks.get(id);
  }

  async findConversation(id: ConversationId): Promise<ConversationRecord | undefined> {
    const local = this.localConversation(id);
    if (local) return local;
    const stored = await this.kernel.storage.conversation(id);
    if (stored) this.kernel.rememberConversation(stored);
    return stored;
  }

  async findEntry(id: EntryId): Promise<EntryRecord | undefined> {
    const local =
      this.entries?.find((entry) => entry.id === id) ?? this.kernel.overlay.entries.get(id);
    if (local) return local;
    return (await this.kernel.storage.entry(id))?.entry;
  }

  async findTask(id: TaskId): Promise<TaskRecord | undefined> {
    const local = this.localTask(id);
    if (local) return local;
    return this.kernel.storage.task(id);
  }

  async findSubmission(id: SubmissionId): Promise<SubmissionRecord | undefined> {
    const local = this.submissions?.get(id) ?? this.kernel.overlay.submissions.get(id);
    if (local) return local;
    return this.kernel.storage.submission(id);
  }

  async requireConversation(
    id: ConversationId,
    what = "conversation",
  ): Promise<ConversationRecord> {
    checkId(what, id);
    const record = await this.findConversation(id);
    this.stillOpen();
    return record ?? unknown(`${what} ${id}`);
  }

  async requireTask(id: TaskId, what = "task"): Promise<TaskRecord> {
    checkId(what, id);
    const record = await this.findTask(id);
    this.stillOpen();
    return record ?? unknown(`${what} ${id}`);
  }

  async requireEntry(id: EntryId, what = "entry"): Promise<EntryRecord> {
    checkId(what, id);
    const record = await this.findEntry(id);
    this.stillOpen();
    return record ?? unknown(`${what} ${id}`);
  }

  segments(conversationId: ConversationId): Promise<EntrySegment[] | undefined> {
    return entrySegments(conversationId, (id) => this.findConversation(id));
  }

  /** A fresh id (a failure fails the session: storage is broken). */
  async mint(): Promise<number> {
    const id = await this.kernel.mintId().then(undefined, this.kernel.mintFailed);
    this.stillOpen();
    return id;
  }
}
