import type { ConversationId, EntryId, SubmissionId, TaskId } from "../domain/ids.js";
import type { Json } from "../domain/json.js";
import type {
  ConversationRecord,
  EntryRecord,
  Ownership,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";
import type {
  ConversationQuery,
  Cursor,
  EntryQuery,
  Page,
  SubmissionQuery,
  TaskQuery,
} from "../storage/port.js";
import type { Draft } from "./draft.js";
import type { Kernel } from "./kernel.js";
import type { CommitInfo, PreparedCommit } from "./prepared.js";
import type {
  DocFamilyToken,
  DocScopeKind,
  DocToken,
  DocValue,
  ScopeIdOf,
  TaskToken,
} from "./tokens.js";
import * as documents from "./transaction-documents.js";
import * as reads from "./transaction-reads.js";
import { discard, seal } from "./transaction-seal.js";
import { TransactionState } from "./transaction-state.js";
import * as writes from "./transaction-writes.js";
import type {
  AppendEntryInput,
  CreateSubmissionInput,
  CreateTaskOptions,
  SubmissionSettlement,
} from "./transaction-writes.js";

export type {
  AppendEntryInput,
  CreateSubmissionInput,
  CreateTaskOptions,
  SubmissionSettlement,
} from "./transaction-writes.js";

type Operation<A extends unknown[], R> = (tx: TransactionState, ...args: A) => R | Promise<R>;

const ignore = (): void => undefined;

/** A rejected promise that is already observed: the commit reports the failure, not the process. */
function observedRejection<T>(error: unknown): Promise<T> {
  const rejected = rejection<T>(error);
  rejected.catch(ignore);
  return rejected;
}

// eslint-disable-next-line @typescript-eslint/require-await -- the async function is how the rejection is made
async function rejection<T>(error: unknown): Promise<T> {
  throw error;
}

/**
 * One commit callback's view of the session: table reads (committed state
 * plus prepared commits) until the first table write, table writes, and
 * document drafts. Each operation says here, at the front, what it is:
 *
 * - a read fails only itself: it adds nothing, so the callback may handle
 *   the error and go on (a bad cursor, ReadAfterWrite);
 * - a write (anything that adds to the batch, documents included) that fails
 *   fails the whole commit, whether or not the callback awaited or caught it.
 *
 * Operations still running when the callback settles belong to the commit:
 * sealing waits for them. Observing each one here also keeps a failure the
 * callback never awaited from becoming an unhandled rejection.
 */
export class Transaction {
  private readonly state: TransactionState;
  /** Operations started and not yet settled (a counter: the hot path pays no Set or array per operation). */
  private pending = 0;
  /** The first write that failed, in the order they failed; it fails the whole commit. */
  private failure: { readonly error: unknown } | undefined;
  /** Wakes `whenSettled` once `pending` reaches zero. */
  private wake: (() => void) | undefined;
  // One pair of handlers per transaction, not a closure per operation.
  private readonly onOperationDone = (): void => {
    if (--this.pending === 0 && this.wake !== undefined) this.wake();
  };
  private readonly onWriteFailed = (error: unknown): void => {
    this.failure ??= { error };
    this.onOperationDone();
  };

  constructor(kernel: Kernel, deferred: boolean) {
    this.state = new TransactionState(kernel, deferred);
  }

  /** True for a deferred (progress) commit. */
  get deferred(): boolean {
    return this.state.deferred;
  }

  // ---- tracking -------------------------------------------------------------

  private read<A extends unknown[], R>(
    name: string,
    operation: Operation<A, R>,
    ...args: A
  ): Promise<R> {
    let result: R | Promise<R>;
    try {
      this.state.beginRead(name);
      result = operation(this.state, ...args);
    } catch (error) {
      return observedRejection(error);
    }
    if (!(result instanceof Promise)) return Promise.resolve(result);
    this.pending++;
    result.then(this.onOperationDone, this.onOperationDone);
    return result;
  }

  /** A write: `table` ones end the transaction's table reads. */
  private write<A extends unknown[], R>(
    table: boolean,
    operation: Operation<A, R>,
    ...args: A
  ): Promise<R> {
    let result: R | Promise<R>;
    try {
      if (table) this.state.beginWrite();
      else this.state.use();
      result = operation(this.state, ...args);
    } catch (error) {
      this.failure ??= { error };
      return observedRejection(error);
    }
    // Done already (a document the session held, say): nothing to wait for.
    if (!(result instanceof Promise)) return Promise.resolve(result);
    this.pending++;
    result.then(this.onOperationDone, this.onWriteFailed);
    return result;
  }

  /**
   * @internal Called once the callback settled: no operation may start any
   * more. Returns `null` when every started operation has settled already
   * (the common case, no extra await), else a promise that resolves once
   * they have. A write the callback started but did not await still belongs
   * to this commit: it is waited for rather than dropped.
   */
  whenSettled(): Promise<void> | null {
    this.state.settled = true;
    if (this.pending === 0) return null;
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  /** @internal The first failure of a write this transaction started, if any failed. */
  get operationFailure(): { readonly error: unknown } | undefined {
    return this.failure;
  }

  /** @internal Revokes every draft without producing a batch (the callback threw). */
  discard(): void {
    discard(this.state);
  }

  /**
   * @internal Revokes every draft and turns the transaction into one batch
   * (`null` when nothing changed). A promise only when sealing needs storage
   * (forks, tasks made terminal); throws when preparation fails.
   */
  seal(): PreparedCommit | null | Promise<PreparedCommit | null> {
    return seal(this.state);
  }

  // ---- table reads ------------------------------------------------------------

  conversation(id: ConversationId): Promise<ConversationRecord | undefined> {
    return this.read("conversation", reads.conversation, id);
  }

  entry(id: EntryId): Promise<EntryRecord | undefined> {
    return this.read("entry", reads.entry, id);
  }

  task(id: TaskId): Promise<TaskRecord | undefined> {
    return this.read("task", reads.task, id);
  }

  submission(id: SubmissionId): Promise<SubmissionRecord | undefined> {
    return this.read("submission", reads.submission, id);
  }

  /** The submission of that conversation with that request id (lowest id if several). */
  submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
  ): Promise<SubmissionRecord | undefined> {
    return this.read("submissionByRequest", reads.submissionByRequest, conversationId, requestId);
  }

  /** Newest visible entry carrying a `head` marker, at or before `atOrBefore`. */
  latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
  ): Promise<EntryRecord | undefined> {
    return this.read("latestHead", reads.latestHead, conversationId, atOrBefore);
  }

  scanEntries(query: EntryQuery, limit: number, cursor?: Cursor): Promise<Page<EntryRecord>> {
    return this.read("scanEntries", reads.scanEntries, query, limit, cursor);
  }

  scanTasks(query: TaskQuery, limit: number, cursor?: Cursor): Promise<Page<TaskRecord>> {
    return this.read("scanTasks", reads.scanTasks, query, limit, cursor);
  }

  scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
  ): Promise<Page<ConversationRecord>> {
    return this.read("scanConversations", reads.scanConversations, query, limit, cursor);
  }

  scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
  ): Promise<Page<SubmissionRecord>> {
    return this.read("scanSubmissions", reads.scanSubmissions, query, limit, cursor);
  }

  // ---- table writes -------------------------------------------------------------

  createConversation(options: { ownership: Ownership }): Promise<ConversationRecord> {
    return this.write(true, writes.createConversation, options);
  }

  /**
   * A child conversation that sees the parent's entries up to and including
   * `atEntryId`. The parent's conversation documents follow their `fork`
   * policy when this commit is sealed: "current" copies the value at the end
   * of this commit, "asOf" the value as of the commit that wrote `atEntryId`,
   * "initial" copies nothing.
   */
  forkConversation(
    parentId: ConversationId,
    atEntryId: EntryId,
    options: { ownership: Ownership },
  ): Promise<ConversationRecord> {
    return this.write(true, writes.forkConversation, parentId, atEntryId, options);
  }

  appendEntry(conversationId: ConversationId, input: AppendEntryInput): Promise<EntryRecord> {
    return this.write(true, writes.appendEntry, conversationId, input);
  }

  /** Creates a `pending` task whose checkpoint is `token.initial(input)`. */
  createTask<I extends Json>(
    token: TaskToken<I>,
    input: I,
    options: CreateTaskOptions,
  ): Promise<TaskId> {
    return this.write(true, writes.createTask<I>, token, input, options);
  }

  /**
   * Replaces an existing task whole (the scheduler's write). When the task
   * becomes terminal, its task-scope documents retire in the same commit.
   */
  putTask(record: TaskRecord): Promise<TaskRecord> {
    return this.write(true, writes.putTask, record);
  }

  createSubmission(
    conversationId: ConversationId,
    input: CreateSubmissionInput,
  ): Promise<SubmissionRecord> {
    return this.write(true, writes.createSubmission, conversationId, input);
  }

  /** Marks a queued submission placed: its entry is in the transcript. */
  placeSubmission(id: SubmissionId, entryId: EntryId): Promise<SubmissionRecord> {
    return this.write(true, writes.placeSubmission, id, entryId);
  }

  settleSubmission(id: SubmissionId, settlement: SubmissionSettlement): Promise<SubmissionRecord> {
    return this.write(true, writes.settleSubmission, id, settlement);
  }

  // ---- documents ----------------------------------------------------------------

  /** Get-or-create a document and return its draft. */
  doc<T extends DocValue, S extends DocScopeKind>(
    token: DocToken<T, S>,
    scopeId: ScopeIdOf<S>,
  ): Promise<Draft<T>>;
  doc<T extends DocValue, S extends DocScopeKind, Seed>(
    token: DocFamilyToken<T, S, Seed>,
    scopeId: ScopeIdOf<S>,
    key: string,
    seed: Seed,
  ): Promise<Draft<T>>;
  doc(
    token: DocToken | DocFamilyToken<DocValue, DocScopeKind, unknown>,
    scopeId: unknown,
    key?: string,
    seed?: unknown,
  ): Promise<DocValue> {
    return this.write(false, documents.doc, token, scopeId, key, seed);
  }

  /** Replaces a draft's whole value (`["r", value]`); returns the new draft, the old one is revoked. */
  replaceDoc<T extends DocValue>(draft: Draft<T>, value: T): Draft<T> {
    this.state.use();
    return documents.replaceDoc(this.state, draft, value) as Draft<T>;
  }

  /** Ends the document's current incarnation; returns false when there is none. */
  retireDoc<T extends DocValue, S extends DocScopeKind>(
    token: DocToken<T, S>,
    scopeId: ScopeIdOf<S>,
  ): Promise<boolean>;
  retireDoc<T extends DocValue, S extends DocScopeKind, Seed>(
    token: DocFamilyToken<T, S, Seed>,
    scopeId: ScopeIdOf<S>,
    key: string,
  ): Promise<boolean>;
  retireDoc(
    token: DocToken | DocFamilyToken<DocValue, DocScopeKind, unknown>,
    scopeId: unknown,
    key?: string,
  ): Promise<boolean> {
    return this.write(false, documents.retireDoc, token, scopeId, key);
  }

  /** Runs `hook` once this commit is stored and published (internal hook for the scheduler and harness). */
  afterCommit(hook: (info: CommitInfo) => void): void {
    this.state.use();
    (this.state.hooks ??= []).push(hook);
  }
}
