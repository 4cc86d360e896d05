import { DraftRevoked, ReadAfterWrite, UnknownRecord } from "../domain/errors.js";
import type {
  ConversationId,
  DocumentId,
  EntryId,
  Seq,
  SubmissionId,
  TaskId,
} from "../domain/ids.js";
import { copyJson, type Json, type JsonObject } from "../domain/json.js";
import type { Op } from "../domain/ops.js";
import type {
  ContextEdit,
  ConversationRecord,
  DocumentScope,
  EntryRecord,
  Message,
  NewDocumentRecord,
  Ownership,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";
import { entrySegments, type EntrySegment } from "../storage/ancestry.js";
import type {
  ConversationQuery,
  Cursor,
  DocumentAddress,
  EntryQuery,
  Page,
  StorageWrite,
  SubmissionQuery,
  TaskQuery,
} from "../storage/port.js";
import { scopeKey } from "../storage/scope.js";
import { incarnationFrom } from "./doc-cache.js";
import { checkVersion, migrateValue } from "./doc-versions.js";
import { DraftTracker, type Draft } from "./draft.js";
import { deepFreeze } from "./freeze.js";
import type { Kernel } from "./kernel.js";
import { mergedScan } from "./merged-scan.js";
import type {
  CommitInfo,
  DocChange,
  DocIncarnation,
  DocState,
  PreparedCommit,
} from "./prepared.js";
import { checkTaskRecord, copyTaskRecord, isTerminal, matchesTaskQuery } from "./task-records.js";
import {
  addressKey,
  addressOf,
  type AnyDocToken,
  type DocFamilyToken,
  type DocScopeKind,
  type DocToken,
  type DocValue,
  type ScopeIdOf,
  type TaskToken,
} from "./tokens.js";

export interface AppendEntryInput {
  kind: string;
  data?: Json;
  model?: Message[];
  head?: EntryId;
  edits?: ContextEdit[];
  byTaskId?: TaskId;
}

export interface CreateTaskOptions {
  ownership: Ownership;
  /** Defaults to the owner task's conversation; required for ownerless tasks. */
  conversationId?: ConversationId;
  background?: boolean;
}

export interface CreateSubmissionInput {
  type: "input" | "write";
  content: Json;
  requestId?: string;
}

export type SubmissionSettlement =
  { status: "done"; answer: EntryId } | { status: "unanswered"; reason: string; detail?: Json };

/** A value written whole: its own levels count toward MAX_JSON_DEPTH. */
const VALUE = { depth: 0 } as const;
const ENTRY_FIELDS = new Set(["kind", "data", "model", "head", "edits", "byTaskId"]);
const SCAN_PAGE = 256;

interface OpenDoc {
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
  readonly createdAt: Seq | undefined;
  readonly deltasSinceBase: number;
  readonly tracker: DraftTracker;
  retired: boolean;
}

interface ForkCopyRequest {
  readonly child: ConversationId;
  readonly parent: ConversationId;
  readonly at: EntryId;
}

interface ScopeDoc {
  readonly key: string;
  readonly address: DocumentAddress;
  readonly id: DocumentId;
  readonly record: NewDocumentRecord;
  readonly open: OpenDoc | undefined;
}

function unknown(what: string): never {
  throw new UnknownRecord(`${what} does not exist`);
}

function checkId(what: string, id: unknown): void {
  if (!Number.isSafeInteger(id) || (id as number) < 1)
    throw new TypeError(`${what} must be a positive integer id, got ${String(id)}`);
}

function recordOf(address: DocumentAddress, id: DocumentId, token: AnyDocToken): NewDocumentRecord {
  return {
    id,
    kind: address.kind,
    scope: address.scope,
    ...(address.key !== undefined ? { key: address.key } : {}),
    ...(token.history !== undefined ? { history: token.history } : {}),
    ...(token.fork !== undefined ? { fork: token.fork } : {}),
  };
}

/**
 * One commit callback's view of the session: table reads
 * (committed state plus prepared commits) until the first table write,
 * table writes, and document drafts. `seal()` turns it into one batch.
 */
export class Transaction {
  private wroteTable = false;
  private revoked = false;
  private readonly tableWrites: StorageWrite[] = [];
  private readonly taskWriteIndex = new Map<number, number>();
  private readonly submissionWriteIndex = new Map<number, number>();
  private readonly conversations = new Map<number, ConversationRecord>();
  private readonly entries = new Map<number, EntryRecord>();
  private readonly tasks = new Map<number, TaskRecord>();
  private readonly submissions = new Map<number, SubmissionRecord>();
  private readonly opening = new Map<string, Promise<OpenDoc>>();
  private readonly open = new Map<string, OpenDoc>();
  /** A Map, not a WeakMap: it dies with the transaction, and WeakMap entries survive scavenges. */
  private readonly byDraft = new Map<object, OpenDoc>();
  /** Retirements of incarnations not opened in this transaction, by address key. */
  private readonly retirements = new Map<
    string,
    { address: DocumentAddress; id: DocumentId; basedOn: DocState }
  >();
  private readonly forks: ForkCopyRequest[] = [];
  private readonly terminalTasks = new Set<number>();
  private readonly hooks: ((info: CommitInfo) => void)[] = [];

  constructor(
    private readonly kernel: Kernel,
    readonly deferred: boolean,
  ) {}

  // ---- guards -------------------------------------------------------------

  private use(): void {
    if (this.revoked || this.settled)
      throw new DraftRevoked("the transaction was used after its commit callback settled");
    this.kernel.check();
  }

  /** Set when the callback settled: no new operation may start, started ones may finish. */
  private settled = false;
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
  private readonly onOperationFailed = (error: unknown): void => {
    this.failure ??= { error };
    this.onOperationDone();
  };

  /**
   * @internal Registers an operation (see TRACKED_WRITES). A write's failure
   * is recorded when it happens, so a failure that settled long before the
   * callback returned still fails the commit, whether or not the callback
   * awaited or caught it. Observing it here also keeps an un-awaited failure
   * from becoming an unhandled rejection: the commit reports it.
   */
  track<T>(operation: Promise<T>, failsCommit: boolean): Promise<T> {
    this.pending++;
    operation.then(
      this.onOperationDone,
      failsCommit ? this.onOperationFailed : this.onOperationDone,
    );
    return operation;
  }

  /**
   * @internal Called once the callback settled: no operation may start any
   * more. Returns `null` when every started operation has settled already
   * (the common case, no extra await), else a promise that resolves once
   * they have. A write the callback started but did not await still belongs
   * to this commit: it is waited for rather than dropped.
   */
  whenSettled(): Promise<void> | null {
    this.settled = true;
    if (this.pending === 0) return null;
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  /** @internal The first failure of a write this transaction started, if any failed. */
  get operationFailure(): { readonly error: unknown } | undefined {
    return this.failure;
  }

  private beginRead(what: string): void {
    this.use();
    if (this.wroteTable)
      throw new ReadAfterWrite(
        `${what}: table reads must come before the transaction's first table write`,
      );
  }

  private beginWrite(): void {
    this.use();
    this.wroteTable = true;
  }

  /** After an await: the callback may have settled meanwhile. */
  private stillOpen(): void {
    if (this.revoked)
      throw new DraftRevoked("the transaction was used after its commit callback settled");
  }

  // ---- lookups shared by reads and write validation -----------------------

  /** A conversation this transaction, a prepared commit or the session already knows (no storage read). */
  private localConversation(id: ConversationId): ConversationRecord | undefined {
    return (
      this.conversations.get(id) ??
      this.kernel.overlay.conversations.get(id) ??
      this.kernel.knownConversation(id)
    );
  }

  private async findConversation(id: ConversationId): Promise<ConversationRecord | undefined> {
    const local = this.localConversation(id);
    if (local) return local;
    const stored = await this.kernel.storage.conversation(id);
    if (stored) this.kernel.rememberConversation(stored);
    return stored;
  }

  private async findEntry(id: EntryId): Promise<EntryRecord | undefined> {
    const local = this.entries.get(id) ?? this.kernel.overlay.entries.get(id);
    if (local) return local;
    return (await this.kernel.storage.entry(id))?.entry;
  }

  private async findTask(id: TaskId): Promise<TaskRecord | undefined> {
    const local = this.tasks.get(id) ?? this.kernel.overlay.tasks.get(id);
    if (local) return local;
    return this.kernel.storage.task(id);
  }

  private async findSubmission(id: SubmissionId): Promise<SubmissionRecord | undefined> {
    const local = this.submissions.get(id) ?? this.kernel.overlay.submissions.get(id);
    if (local) return local;
    return this.kernel.storage.submission(id);
  }

  private async requireConversation(
    id: ConversationId,
    what = "conversation",
  ): Promise<ConversationRecord> {
    checkId(what, id);
    const record = await this.findConversation(id);
    this.stillOpen();
    return record ?? unknown(`${what} ${id}`);
  }

  private async requireTask(id: TaskId, what = "task"): Promise<TaskRecord> {
    checkId(what, id);
    const record = await this.findTask(id);
    this.stillOpen();
    return record ?? unknown(`${what} ${id}`);
  }

  private async requireEntry(id: EntryId, what = "entry"): Promise<EntryRecord> {
    checkId(what, id);
    const record = await this.findEntry(id);
    this.stillOpen();
    return record ?? unknown(`${what} ${id}`);
  }

  private async segments(conversationId: ConversationId): Promise<EntrySegment[] | undefined> {
    return entrySegments(conversationId, (id) => this.findConversation(id));
  }

  private async mint(): Promise<number> {
    const id = await this.kernel.mintId();
    this.stillOpen();
    return id;
  }

  // ---- table reads --------------------------------------------------------

  async conversation(id: ConversationId): Promise<ConversationRecord | undefined> {
    this.beginRead("conversation");
    return this.findConversation(id);
  }

  async entry(id: EntryId): Promise<EntryRecord | undefined> {
    this.beginRead("entry");
    return this.findEntry(id);
  }

  async task(id: TaskId): Promise<TaskRecord | undefined> {
    this.beginRead("task");
    return this.findTask(id);
  }

  async submission(id: SubmissionId): Promise<SubmissionRecord | undefined> {
    this.beginRead("submission");
    return this.findSubmission(id);
  }

  /** The submission of that conversation with that request id (lowest id if several). */
  async submissionByRequest(
    conversationId: ConversationId,
    requestId: string,
  ): Promise<SubmissionRecord | undefined> {
    this.beginRead("submissionByRequest");
    const table = this.kernel.overlay.submissions;
    const candidates = table
      .values()
      .filter((s) => s.conversationId === conversationId && s.requestId === requestId);
    const stored = await this.kernel.storage.submissionByRequest(conversationId, requestId);
    // A stored copy whose id the overlay holds is stale; the overlay's version was filtered above.
    if (stored && table.get(stored.id) === undefined) candidates.push(stored);
    return candidates.sort((a, b) => a.id - b.id)[0];
  }

  /** Newest visible entry carrying a `head` marker, at or before `atOrBefore`. */
  async latestHead(
    conversationId: ConversationId,
    atOrBefore?: EntryId,
  ): Promise<EntryRecord | undefined> {
    this.beginRead("latestHead");
    const pending = this.kernel.overlay.entries.values().filter((e) => e.head !== undefined);
    const stored = await this.kernel.storage.latestHead(conversationId, atOrBefore);
    if (pending.length === 0) return stored;
    const segments = (await this.segments(conversationId)) ?? [];
    let best = stored;
    for (const e of pending) {
      if (atOrBefore !== undefined && e.id > atOrBefore) continue;
      if (
        !segments.some(
          (s) =>
            s.conversationId === e.conversationId &&
            e.id > s.minExclusive &&
            e.id <= s.maxInclusive,
        )
      )
        continue;
      if (!best || e.id > best.id) best = e;
    }
    return best;
  }

  async scanEntries(query: EntryQuery, limit: number, cursor?: Cursor): Promise<Page<EntryRecord>> {
    this.beginRead("scanEntries");
    const pending = this.kernel.overlay.entries.values();
    let overlay: EntryRecord[] = [];
    if (pending.length > 0 && query !== null && typeof query === "object") {
      const segments = (await this.segments(query.conversationId)) ?? [];
      overlay = pending.filter(
        (e) =>
          segments.some(
            (s) =>
              s.conversationId === e.conversationId &&
              e.id > s.minExclusive &&
              e.id <= s.maxInclusive,
          ) &&
          (query.minEntryId === undefined || e.id >= query.minEntryId) &&
          (query.maxEntryId === undefined || e.id <= query.maxEntryId),
      );
    }
    return mergedScan({
      name: "scanEntries",
      query,
      limit,
      cursor,
      descending: (query as { order?: string } | null)?.order !== "ascending",
      overlay,
      overridden: () => false,
      overlayEmpty: pending.length === 0,
      fetch: (l, c) => this.kernel.storage.scanEntries(query, l, c),
    });
  }

  async scanTasks(query: TaskQuery, limit: number, cursor?: Cursor): Promise<Page<TaskRecord>> {
    this.beginRead("scanTasks");
    const table = this.kernel.overlay.tasks;
    const pending = table.values();
    const ids = new Set<number>(pending.map((t) => t.id));
    return mergedScan({
      name: "scanTasks",
      query,
      limit,
      cursor,
      descending: (query as { order?: string } | null)?.order === "descending",
      overlay: pending.filter((t) => matchesTaskQuery(t, query)),
      overridden: (id) => ids.has(id),
      overlayEmpty: pending.length === 0,
      fetch: (l, c) => this.kernel.storage.scanTasks(query, l, c),
    });
  }

  async scanConversations(
    query: ConversationQuery,
    limit: number,
    cursor?: Cursor,
  ): Promise<Page<ConversationRecord>> {
    this.beginRead("scanConversations");
    const pending = this.kernel.overlay.conversations.values();
    return mergedScan({
      name: "scanConversations",
      query,
      limit,
      cursor,
      descending: (query as { order?: string } | null)?.order === "descending",
      overlay: pending.filter(
        (c) => query?.ownerTaskId === undefined || c.owner?.taskId === query.ownerTaskId,
      ),
      overridden: () => false,
      overlayEmpty: pending.length === 0,
      fetch: (l, c) => this.kernel.storage.scanConversations(query, l, c),
    });
  }

  async scanSubmissions(
    query: SubmissionQuery,
    limit: number,
    cursor?: Cursor,
  ): Promise<Page<SubmissionRecord>> {
    this.beginRead("scanSubmissions");
    const pending = this.kernel.overlay.submissions.values();
    const ids = new Set<number>(pending.map((s) => s.id));
    return mergedScan({
      name: "scanSubmissions",
      query,
      limit,
      cursor,
      descending: (query as { order?: string } | null)?.order === "descending",
      overlay: pending.filter(
        (s) =>
          s.conversationId === query?.conversationId &&
          (query.status === undefined || s.status === query.status),
      ),
      overridden: (id) => ids.has(id),
      overlayEmpty: pending.length === 0,
      fetch: (l, c) => this.kernel.storage.scanSubmissions(query, l, c),
    });
  }

  // ---- table writes -------------------------------------------------------

  private async ownerOf(
    ownership: Ownership,
  ): Promise<{ conversationId: ConversationId; taskId: TaskId } | undefined> {
    if (typeof ownership !== "object" || ownership === null)
      throw new TypeError('ownership must be { kind: "ownerless" } or { kind: "task", taskId }');
    if (ownership.kind === "ownerless") return undefined;
    if (ownership.kind !== "task")
      throw new TypeError(
        `unknown ownership kind ${JSON.stringify((ownership as { kind: unknown }).kind)}`,
      );
    const task = await this.requireTask(ownership.taskId, "owner task");
    return { conversationId: task.conversationId, taskId: task.id };
  }

  private pushConversation(record: ConversationRecord): ConversationRecord {
    const frozen = deepFreeze(record as unknown as JsonObject) as unknown as ConversationRecord;
    this.tableWrites.push({ type: "conversation", value: frozen });
    this.conversations.set(frozen.id, frozen);
    return frozen;
  }

  async createConversation(options: { ownership: Ownership }): Promise<ConversationRecord> {
    this.beginWrite();
    const owner = await this.ownerOf(options?.ownership);
    const id = (await this.mint()) as ConversationId;
    return this.pushConversation({ id, ...(owner ? { owner } : {}) });
  }

  /**
   * A child conversation that sees the parent's entries up to and including
   * `atEntryId`. The parent's conversation documents follow their `fork`
   * policy when this commit is sealed: "current" copies the value at the end
   * of this commit, "asOf" the value as of the commit that wrote `atEntryId`,
   * "initial" copies nothing.
   */
  async forkConversation(
    parentId: ConversationId,
    atEntryId: EntryId,
    options: { ownership: Ownership },
  ): Promise<ConversationRecord> {
    this.beginWrite();
    await this.requireConversation(parentId, "parent conversation");
    const at = await this.requireEntry(atEntryId, "fork point entry");
    const segments = (await this.segments(parentId)) ?? [];
    this.stillOpen();
    if (
      !segments.some(
        (s) =>
          s.conversationId === at.conversationId &&
          at.id > s.minExclusive &&
          at.id <= s.maxInclusive,
      )
    )
      throw new UnknownRecord(
        `entry ${atEntryId} is not visible in conversation ${parentId}, so it cannot be its fork point`,
      );
    const owner = await this.ownerOf(options?.ownership);
    const id = (await this.mint()) as ConversationId;
    this.forks.push({ child: id, parent: parentId, at: atEntryId });
    return this.pushConversation({
      id,
      parent: { conversationId: parentId, at: atEntryId },
      ...(owner ? { owner } : {}),
    });
  }

  async appendEntry(conversationId: ConversationId, input: AppendEntryInput): Promise<EntryRecord> {
    this.beginWrite();
    if (typeof input !== "object" || input === null)
      throw new TypeError("entry: the input must be an object");
    for (const key of Object.keys(input))
      if (!ENTRY_FIELDS.has(key))
        throw new TypeError(
          `entry.${key}: not an entry field (kind, data, model, head, edits, byTaskId)`,
        );
    // The input object is a wrapper, not a value: data, model and edits get 256 levels each.
    const fields = copyJson(input, "entry", { depth: -1 }) as unknown as AppendEntryInput;
    if (typeof fields.kind !== "string" || fields.kind === "")
      throw new TypeError("entry.kind: must be a non-empty string");
    if (fields.head !== undefined) checkId("entry.head", fields.head);
    if (fields.byTaskId !== undefined) checkId("entry.byTaskId", fields.byTaskId);
    if (fields.model !== undefined && !Array.isArray(fields.model))
      throw new TypeError("entry.model: must be an array of messages");
    if (fields.edits !== undefined && !Array.isArray(fields.edits))
      throw new TypeError("entry.edits: must be an array");
    // A known conversation needs no lookup (and no microtask hop): the common case.
    if (!Number.isSafeInteger(conversationId) || !this.localConversation(conversationId))
      await this.requireConversation(conversationId);
    const id = (await this.mint()) as EntryId;
    const record: EntryRecord = { id, conversationId, ...fields };
    deepFreeze(record as unknown as JsonObject);
    this.tableWrites.push({ type: "entry", value: record });
    this.entries.set(id, record);
    return record;
  }

  private pushTask(record: TaskRecord): TaskRecord {
    const frozen = deepFreeze(record as unknown as JsonObject) as unknown as TaskRecord;
    const write: StorageWrite = { type: "task", value: frozen };
    const index = this.taskWriteIndex.get(frozen.id);
    if (index === undefined) {
      this.taskWriteIndex.set(frozen.id, this.tableWrites.length);
      this.tableWrites.push(write);
    } else this.tableWrites[index] = write;
    this.tasks.set(frozen.id, frozen);
    return frozen;
  }

  /** Creates a `pending` task whose checkpoint is `token.initial(input)`. */
  async createTask<I extends Json>(
    token: TaskToken<I>,
    input: I,
    options: CreateTaskOptions,
  ): Promise<TaskId> {
    this.beginWrite();
    if (
      typeof token !== "object" ||
      token === null ||
      typeof token.name !== "string" ||
      typeof token.initial !== "function"
    )
      throw new TypeError("createTask: not a task definition ({ name, version, initial })");
    if (!Number.isSafeInteger(token.version) || token.version < 1)
      throw new TypeError(`task "${token.name}": version must be a positive integer`);
    const frozenInput = deepFreeze(copyJson(input, "task.input", VALUE)) as I;
    const checkpoint = copyJson(token.initial(frozenInput), "task.checkpoint", VALUE);
    const owner = await this.ownerOf(options?.ownership);
    const conversationId = options.conversationId ?? owner?.conversationId;
    if (conversationId === undefined)
      throw new TypeError("createTask: an ownerless task needs a conversationId");
    await this.requireConversation(conversationId);
    if (options.background !== undefined && typeof options.background !== "boolean")
      throw new TypeError("createTask: background must be a boolean");
    const id = (await this.mint()) as TaskId;
    this.pushTask({
      id,
      conversationId,
      kind: token.name,
      version: token.version,
      input: frozenInput,
      ...(owner ? { owner: owner.taskId } : {}),
      background: options.background ?? false,
      abortRequested: false,
      state: { status: "pending", checkpoint },
    });
    return id;
  }

  /**
   * Replaces an existing task whole (the scheduler's write). When the task
   * becomes terminal, its task-scope documents retire in the same commit.
   */
  async putTask(record: TaskRecord): Promise<TaskRecord> {
    this.beginWrite();
    const copy = copyTaskRecord(record);
    checkTaskRecord(copy);
    const previous = await this.requireTask(copy.id);
    if (previous.conversationId !== copy.conversationId)
      throw new TypeError(
        `task.conversationId: task ${copy.id} belongs to conversation ${previous.conversationId}`,
      );
    if (isTerminal(copy) && !isTerminal(previous)) this.terminalTasks.add(copy.id);
    return this.pushTask(copy);
  }

  private pushSubmission(record: SubmissionRecord): SubmissionRecord {
    const frozen = deepFreeze(record as unknown as JsonObject) as unknown as SubmissionRecord;
    const write: StorageWrite = { type: "submission", value: frozen };
    const index = this.submissionWriteIndex.get(frozen.id);
    if (index === undefined) {
      this.submissionWriteIndex.set(frozen.id, this.tableWrites.length);
      this.tableWrites.push(write);
    } else this.tableWrites[index] = write;
    this.submissions.set(frozen.id, frozen);
    return frozen;
  }

  async createSubmission(
    conversationId: ConversationId,
    input: CreateSubmissionInput,
  ): Promise<SubmissionRecord> {
    this.beginWrite();
    if (typeof input !== "object" || input === null)
      throw new TypeError("submission: the input must be an object");
    if (input.type !== "input" && input.type !== "write")
      throw new TypeError(`submission.type: must be "input" or "write"`);
    if (input.requestId !== undefined && typeof input.requestId !== "string")
      throw new TypeError("submission.requestId: must be a string");
    const content = copyJson(input.content, "submission.content", VALUE);
    await this.requireConversation(conversationId);
    const id = (await this.mint()) as SubmissionId;
    return this.pushSubmission({
      id,
      conversationId,
      type: input.type,
      status: "queued",
      content,
      ...(input.requestId !== undefined ? { requestId: input.requestId } : {}),
    });
  }

  private async requireOpenSubmission(id: SubmissionId): Promise<SubmissionRecord> {
    checkId("submission", id);
    const found = this.submissions.get(id) ?? (await this.findSubmission(id));
    this.stillOpen();
    if (!found) unknown(`submission ${id}`);
    if (found.status === "done" || found.status === "unanswered")
      throw new TypeError(`submission ${id} is already settled (${found.status})`);
    return found;
  }

  /** Marks a queued submission placed: its entry is in the transcript. */
  async placeSubmission(id: SubmissionId, entryId: EntryId): Promise<SubmissionRecord> {
    this.beginWrite();
    const submission = await this.requireOpenSubmission(id);
    if (submission.status !== "queued")
      throw new TypeError(`submission ${id} is ${submission.status}, not queued`);
    await this.requireEntry(entryId);
    return this.pushSubmission({ ...submission, status: "placed", entry: entryId });
  }

  async settleSubmission(
    id: SubmissionId,
    settlement: SubmissionSettlement,
  ): Promise<SubmissionRecord> {
    this.beginWrite();
    const submission = await this.requireOpenSubmission(id);
    if (settlement?.status === "done") {
      await this.requireEntry(settlement.answer, "answer entry");
      return this.pushSubmission({ ...submission, status: "done", answer: settlement.answer });
    }
    if (settlement?.status === "unanswered") {
      if (typeof settlement.reason !== "string")
        throw new TypeError("settleSubmission: reason must be a string");
      const detail =
        settlement.detail === undefined
          ? undefined
          : copyJson(settlement.detail, "submission.detail", VALUE);
      return this.pushSubmission({
        ...submission,
        status: "unanswered",
        reason: settlement.reason,
        ...(detail !== undefined ? { detail } : {}),
      });
    }
    throw new TypeError(`settleSubmission: status must be "done" or "unanswered"`);
  }

  // ---- documents ----------------------------------------------------------

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
  async doc(token: AnyDocToken, scopeId: unknown, key?: string, seed?: unknown): Promise<DocValue> {
    this.use();
    const address = addressOf(token, scopeId, key);
    const k = addressKey(address);
    let opening = this.opening.get(k);
    if (!opening) {
      opening = this.openDoc(token, address, k, seed);
      this.opening.set(k, opening);
      void opening.catch(() => this.opening.delete(k)); // a failed open may be retried
    }
    const open = await opening;
    this.stillOpen();
    if (open.token.version !== token.version)
      throw new TypeError(
        `document "${token.kind}" was opened in this transaction with version ${open.token.version}`,
      );
    if (open.retired)
      throw new TypeError(
        `document "${token.kind}" was retired in this transaction; a new incarnation needs a later commit`,
      );
    return open.tracker.draft;
  }

  private async openDoc(
    token: AnyDocToken,
    address: DocumentAddress,
    k: string,
    seed: unknown,
  ): Promise<OpenDoc> {
    if (this.retirements.has(k))
      throw new TypeError(
        `document "${token.kind}" was retired in this transaction; a new incarnation needs a later commit`,
      );
    if (address.scope.kind === "conversation")
      await this.requireConversation(address.scope.conversationId);
    else if (address.scope.kind === "task") await this.requireTask(address.scope.taskId);
    const slot = this.kernel.docs.slot(k, address);
    const state = await this.kernel.docs.prepared(slot);
    this.stillOpen();
    let open: OpenDoc;
    if (state) {
      checkVersion(token, state);
      const migrated = state.version < token.version;
      const value = migrated ? migrateValue(token, state.value, state.version) : state.value;
      open = {
        key: k,
        address,
        token,
        basedOn: state,
        id: state.id,
        record: state.record,
        created: false,
        migrated,
        createdAt: state.createdAt,
        deltasSinceBase: state.deltasSinceBase,
        tracker: new DraftTracker(value, token.kind),
        retired: false,
      };
    } else {
      const initial = copyJson(
        token.family ? token.initial(seed) : token.initial(),
        `${token.kind} (initial)`,
        VALUE,
      );
      if (typeof initial !== "object" || initial === null)
        throw new TypeError(`${token.kind}: initial must return a JSON object or array`);
      const id = (await this.mint()) as DocumentId;
      open = {
        key: k,
        address,
        token,
        basedOn: null,
        id,
        record: recordOf(address, id, token),
        created: true,
        migrated: false,
        createdAt: undefined,
        deltasSinceBase: 0,
        tracker: new DraftTracker(deepFreeze(initial), token.kind),
        retired: false,
      };
    }
    this.open.set(k, open);
    return open;
  }

  /** Replaces a draft's whole value (`["r", value]`); returns the new draft, the old one is revoked. */
  replaceDoc<T extends DocValue>(draft: Draft<T>, value: T): Draft<T> {
    this.use();
    const open = this.byDraftOf(draft);
    const next = open.tracker.replace(value);
    this.byDraft.set(next, open);
    return next as Draft<T>;
  }

  private byDraftOf(draft: unknown): OpenDoc {
    if (typeof draft === "object" && draft !== null) {
      const known = this.byDraft.get(draft);
      if (known) return known;
      for (const open of this.open.values()) {
        if (open.tracker.draft === draft) {
          this.byDraft.set(draft, open);
          return open;
        }
      }
    }
    throw new TypeError("replaceDoc: not the root draft of a document opened in this transaction");
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
  async retireDoc(token: AnyDocToken, scopeId: unknown, key?: string): Promise<boolean> {
    this.use();
    const address = addressOf(token, scopeId, key);
    const k = addressKey(address);
    const opening = this.opening.get(k);
    if (opening) {
      const open = await opening;
      this.stillOpen();
      if (open.retired) return false;
      open.retired = true;
      return true;
    }
    if (this.retirements.has(k)) return false;
    const slot = this.kernel.docs.slot(k, address);
    const state = await this.kernel.docs.prepared(slot);
    this.stillOpen();
    if (!state) return false;
    this.retirements.set(k, { address, id: state.id, basedOn: state });
    return true;
  }

  /** Runs `hook` once this commit is stored and published (internal hook for the scheduler and harness). */
  afterCommit(hook: (info: CommitInfo) => void): void {
    this.use();
    this.hooks.push(hook);
  }

  // ---- sealing ------------------------------------------------------------

  /** Revokes every draft without producing a batch (the callback threw). */
  discard(): void {
    this.revoked = true;
    for (const open of this.open.values()) open.tracker.revoke();
  }

  /**
   * Revokes every draft and turns the transaction into one batch: table
   * writes in call order, then document content, fork copies, retirements
   * (storage applies retirements after content anyway). Returns `null` when
   * nothing changed. Throws when preparation fails (checkpointWhen throws).
   */
  async seal(): Promise<PreparedCommit | null> {
    this.revoked = true;
    const finals = new Map<string, { value: DocValue; ops: Op[] }>();
    for (const open of this.open.values()) finals.set(open.key, open.tracker.finish());

    const content: StorageWrite[] = [];
    const changes = new Map<string, DocChange>();
    for (const open of this.open.values()) {
      const final = finals.get(open.key) as { value: DocValue; ops: Op[] };
      if (open.created && open.retired) continue; // born and retired in one commit: nothing to store
      const version = open.token.version;
      let state: DocIncarnation = {
        id: open.id,
        record: open.record,
        createdAt: open.createdAt,
        version,
        value: final.value,
        deltasSinceBase: open.deltasSinceBase,
      };
      let ops: readonly Op[] = final.ops;
      if (open.created) {
        content.push({
          type: "document.create",
          record: open.record,
          content: { kind: "base", version, value: final.value },
        });
        ops = [["r", final.value]];
        state = { ...state, deltasSinceBase: 0 };
      } else if (open.migrated) {
        content.push({
          type: "document.change",
          id: open.id,
          content: { kind: "base", version, value: final.value },
        });
        ops = [["r", final.value]];
        state = { ...state, deltasSinceBase: 0 };
      } else if (final.ops.length > 0) {
        const checkpoint = open.token.checkpointWhen;
        const base = checkpoint
          ? checkpoint(final.value, final.ops, { deltasSinceBase: open.deltasSinceBase }) === true
          : false;
        content.push({
          type: "document.change",
          id: open.id,
          content: base
            ? { kind: "base", version, value: final.value }
            : { kind: "delta", version, ops: final.ops },
        });
        state = { ...state, deltasSinceBase: base ? 0 : open.deltasSinceBase + 1 };
      } else if (!open.retired) continue; // opened, not changed
      changes.set(open.key, {
        addressKey: open.key,
        address: open.address,
        basedOn: open.basedOn,
        state: open.retired ? null : state,
        ops: open.retired ? [] : ops,
      });
    }

    // Forks and terminal tasks are rare: skip their async work (and its microtask hops) when absent.
    const copies = this.forks.length > 0 ? await this.forkCopies(finals) : [];
    for (const copy of copies) changes.set(copy.change.addressKey, copy.change);

    const retires: StorageWrite[] = [];
    for (const open of this.open.values())
      if (open.retired && !open.created) retires.push({ type: "document.retire", id: open.id });
    for (const [k, r] of this.retirements) {
      retires.push({ type: "document.retire", id: r.id });
      changes.set(k, {
        addressKey: k,
        address: r.address,
        basedOn: r.basedOn,
        state: null,
        ops: [],
      });
    }
    for (const doc of this.terminalTasks.size > 0 ? await this.terminalTaskDocs() : []) {
      retires.push({ type: "document.retire", id: doc.id });
      changes.set(doc.key, {
        addressKey: doc.key,
        address: doc.address,
        basedOn: doc.open?.basedOn ?? changes.get(doc.key)?.basedOn ?? null,
        state: null,
        ops: [],
      });
    }

    // The transaction is revoked, so its table-write array can carry the batch (no copy).
    const writes = this.tableWrites;
    for (const write of content) writes.push(write);
    for (const copy of copies) writes.push(copy.write);
    for (const write of retires) writes.push(write);
    if (writes.length === 0) return null;
    return {
      writes,
      deferred: this.deferred,
      conversations: valuesOf(this.conversations),
      entries: valuesOf(this.entries),
      tasks: valuesOf(this.tasks),
      submissions: valuesOf(this.submissions),
      docs: valuesOf(changes),
      afterCommit: this.hooks,
    };
  }

  /** Live documents of a scope as this commit leaves them: storage, prepared commits, this transaction. */
  private async scopeDocs(scope: DocumentScope): Promise<ScopeDoc[]> {
    const pending = this.kernel.docs.pendingStates();
    const found = new Map<string, ScopeDoc>();
    let cursor: Cursor | undefined;
    do {
      const page = await this.kernel.storage.scanDocuments(
        { scope, at: "current" },
        SCAN_PAGE,
        cursor,
      );
      for (const record of page.items) {
        const address = addressOfRecord(record);
        const key = addressKey(address);
        found.set(key, {
          key,
          address,
          id: record.id,
          record: incarnationRecord(record),
          open: undefined,
        });
      }
      cursor = page.next;
    } while (cursor !== undefined);
    const wanted = scopeKey(scope);
    const sameScope = (a: DocumentScope): boolean => scopeKey(a) === wanted;
    for (const [key, { slot, state }] of pending) {
      if (!sameScope(slot.address.scope)) continue;
      if (state === null) found.delete(key);
      else
        found.set(key, {
          key,
          address: slot.address,
          id: state.id,
          record: state.record,
          open: undefined,
        });
    }
    for (const open of this.open.values()) {
      if (!sameScope(open.address.scope) || (open.created && open.retired)) continue;
      found.set(open.key, {
        key: open.key,
        address: open.address,
        id: open.id,
        record: open.record,
        open,
      });
    }
    for (const key of this.retirements.keys()) found.delete(key);
    return [...found.values()];
  }

  private async forkCopies(
    finals: Map<string, { value: DocValue; ops: Op[] }>,
  ): Promise<{ write: StorageWrite; change: DocChange }[]> {
    const out: { write: StorageWrite; change: DocChange }[] = [];
    for (const fork of this.forks) {
      const parentScope: DocumentScope = { kind: "conversation", conversationId: fork.parent };
      const childScope: DocumentScope = { kind: "conversation", conversationId: fork.child };
      const copy = async (
        source: { id: DocumentId; record: NewDocumentRecord; address: DocumentAddress },
        at: Seq | "current",
        version: number,
        value: DocValue,
      ): Promise<void> => {
        const address: DocumentAddress = { ...source.address, scope: childScope };
        const key = addressKey(address);
        const id = (await this.kernel.mintId()) as DocumentId;
        const record: NewDocumentRecord = { ...source.record, id, scope: childScope };
        out.push({
          write: { type: "document.copy", record, source: { id: source.id, at } },
          change: {
            addressKey: key,
            address,
            basedOn: null,
            state: { id, record, createdAt: undefined, version, value, deltasSinceBase: 0 },
            ops: [["r", value]],
          },
        });
      };
      // The fork point written by this very commit: "as of" it is the end of this commit.
      const atHere = this.entries.has(fork.at);
      for (const doc of await this.scopeDocs(parentScope)) {
        if (doc.record.fork !== "current" && !(atHere && doc.record.fork === "asOf")) continue;
        let version: number;
        let value: DocValue;
        if (doc.open) {
          version = doc.open.token.version;
          value = (finals.get(doc.key) as { value: DocValue }).value;
        } else {
          const state = await this.kernel.docs.prepared(
            this.kernel.docs.slot(doc.key, doc.address),
          );
          if (!state) continue;
          version = state.version;
          value = state.value;
        }
        await copy(doc, "current", version, value);
      }
      if (!atHere) {
        for (const source of await this.asOfSources(parentScope, fork.at))
          await copy(source, source.seq, source.version, source.value);
      }
    }
    return out;
  }

  /**
   * Rewindable documents of the parent live at the seq of the fork point's
   * commit, with their value then. The seq lookup may wait for a prepared
   * commit to be stored; forks are rare, exactness matters more.
   */
  private async asOfSources(scope: DocumentScope, at: EntryId) {
    const sources: {
      id: DocumentId;
      record: NewDocumentRecord;
      address: DocumentAddress;
      seq: Seq;
      version: number;
      value: DocValue;
    }[] = [];
    const seq = await this.kernel.entrySeq(at);
    if (seq === undefined) throw new UnknownRecord(`fork point entry ${at} is not stored`);
    let cursor: Cursor | undefined;
    do {
      const page = await this.kernel.storage.scanDocuments({ scope, at: seq }, SCAN_PAGE, cursor);
      for (const record of page.items) {
        if (record.fork !== "asOf") continue;
        const doc = await this.kernel.storage.document(record.id, seq);
        if (!doc) continue;
        const inc = incarnationFrom(doc);
        sources.push({
          id: record.id,
          record: inc.record,
          address: addressOfRecord(record),
          seq,
          version: inc.version,
          value: inc.value,
        });
      }
      cursor = page.next;
    } while (cursor !== undefined);
    return sources;
  }

  /** Task-scope documents of tasks this commit made terminal (they retire with it). */
  private async terminalTaskDocs(): Promise<ScopeDoc[]> {
    const out: ScopeDoc[] = [];
    for (const taskId of this.terminalTasks) {
      for (const doc of await this.scopeDocs({ kind: "task", taskId: taskId as TaskId })) {
        if (doc.open?.retired) continue;
        out.push(doc);
      }
    }
    return out;
  }
}

const NONE: readonly never[] = Object.freeze([]);

/** A map's values as an array; the shared empty array when there are none (most tables, most commits). */
function valuesOf<T>(map: ReadonlyMap<unknown, T>): readonly T[] {
  return map.size === 0 ? NONE : [...map.values()];
}

function addressOfRecord(record: NewDocumentRecord): DocumentAddress {
  return {
    kind: record.kind,
    scope: record.scope,
    ...(record.key !== undefined ? { key: record.key } : {}),
  };
}

function incarnationRecord(
  record: NewDocumentRecord & { createdAt?: unknown; retiredAt?: unknown },
): NewDocumentRecord {
  const { createdAt: _c, retiredAt: _r, ...rest } = record;
  return rest;
}

/**
 * The asynchronous operations of `Transaction`, each wrapped once, here, so
 * that sealing waits for the ones a callback forgot to await. A failed write
 * (anything that adds to the batch, documents included) fails the whole
 * commit, caught or not. A failed read fails only itself: it adds nothing, so
 * the callback may handle it and go on (a bad cursor, ReadAfterWrite).
 */
const TRACKED_READS = [
  "conversation",
  "entry",
  "task",
  "submission",
  "submissionByRequest",
  "latestHead",
  "scanEntries",
  "scanTasks",
  "scanConversations",
  "scanSubmissions",
] as const satisfies readonly (keyof Transaction)[];

const TRACKED_WRITES = [
  "createConversation",
  "forkConversation",
  "appendEntry",
  "createTask",
  "putTask",
  "createSubmission",
  "placeSubmission",
  "settleSubmission",
  "doc",
  "retireDoc",
] as const satisfies readonly (keyof Transaction)[];

function wrap(name: keyof Transaction, failsCommit: boolean): void {
  const operation = Reflect.get(Transaction.prototype, name) as (
    this: Transaction,
    ...args: unknown[]
  ) => Promise<unknown>;
  Object.defineProperty(Transaction.prototype, name, {
    configurable: true,
    writable: true,
    value: function (this: Transaction, ...args: unknown[]): Promise<unknown> {
      return this.track(operation.apply(this, args), failsCommit);
    },
  });
}

for (const name of TRACKED_READS) wrap(name, false);
for (const name of TRACKED_WRITES) wrap(name, true);
