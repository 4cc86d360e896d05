import { UnknownRecord } from "../domain/errors.js";
import type { ConversationId, EntryId, SubmissionId, TaskId } from "../domain/ids.js";
import { copyJson, type Json, type JsonObject } from "../domain/json.js";
import { checkTextBytes, MAX_KEY_BYTES, MAX_KIND_BYTES } from "../domain/json-size.js";
import type {
  ContextEdit,
  ConversationRecord,
  EntryRecord,
  Message,
  Ownership,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";
import type { StorageWrite } from "../storage/port.js";
import { deepFreeze } from "./freeze.js";
import { checkTaskRecord, copyTaskRecord, isTerminal, taskSize } from "./task-records.js";
import type { TaskToken } from "./tokens.js";
import { checkId, unknown, visibleIn, type TransactionState } from "./transaction-state.js";
import { copiedSize, measuredSize } from "./value-size.js";

/*
 * Table writes of a transaction: each checks its input, copies it once (a
 * frozen copy: what the batch, the overlay and the caller share) and adds
 * one write to the batch. A replaced task or submission keeps one write.
 */

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
const VALUE = { depth: 0, freeze: true } as const;

/** What a table write adds around its values (ids, statuses, field names), counted per write. */
const RECORD_BYTES = 256;

/** Copies a value written whole and counts its size toward the commit (refused when over the limit). */
function copyValue(tx: TransactionState, value: unknown, where: string): Json {
  const copied = copyJson(value, where, VALUE);
  tx.bytes += copiedSize(copied, tx.kernel.limits, where);
  return copied;
}

async function ownerOf(
  tx: TransactionState,
  ownership: Ownership,
): Promise<{ conversationId: ConversationId; taskId: TaskId } | undefined> {
  if (typeof ownership !== "object" || ownership === null)
    throw new TypeError('ownership must be { kind: "ownerless" } or { kind: "task", taskId }');
  if (ownership.kind === "ownerless") return undefined;
  if (ownership.kind !== "task")
    throw new TypeError(
      `unknown ownership kind ${JSON.stringify((ownership as { kind: unknown }).kind)}`,
    );
  const task = await tx.requireTask(ownership.taskId, "owner task");
  return { conversationId: task.conversationId, taskId: task.id };
}

function pushConversation(tx: TransactionState, record: ConversationRecord): ConversationRecord {
  const frozen = deepFreeze(record as unknown as JsonObject) as unknown as ConversationRecord;
  tx.bytes += RECORD_BYTES;
  tx.tableWrites.push({ type: "conversation", value: frozen });
  (tx.conversations ??= new Map()).set(frozen.id, frozen);
  return frozen;
}

export async function createConversation(
  tx: TransactionState,
  options: { ownership: Ownership },
): Promise<ConversationRecord> {
  const owner = await ownerOf(tx, options?.ownership);
  const id = (await tx.mint()) as ConversationId;
  return pushConversation(tx, { id, ...(owner ? { owner } : {}) });
}

/**
 * A child conversation that sees the parent's entries up to and including
 * `atEntryId`. The parent's conversation documents follow their `fork`
 * policy when this commit is sealed: "current" copies the value at the end
 * of this commit, "asOf" the value as of the commit that wrote `atEntryId`,
 * "initial" copies nothing.
 */
export async function forkConversation(
  tx: TransactionState,
  parentId: ConversationId,
  atEntryId: EntryId,
  options: { ownership: Ownership },
): Promise<ConversationRecord> {
  await tx.requireConversation(parentId, "parent conversation");
  const at = await tx.requireEntry(atEntryId, "fork point entry");
  const segments = (await tx.segments(parentId)) ?? [];
  tx.stillOpen();
  if (!visibleIn(segments, at))
    throw new UnknownRecord(
      `entry ${atEntryId} is not visible in conversation ${parentId}, so it cannot be its fork point`,
    );
  const owner = await ownerOf(tx, options?.ownership);
  const id = (await tx.mint()) as ConversationId;
  (tx.forks ??= []).push({ child: id, parent: parentId, at: atEntryId });
  return pushConversation(tx, {
    id,
    parent: { conversationId: parentId, at: atEntryId },
    ...(owner ? { owner } : {}),
  });
}

/** Where each entry field's errors are reported: the input object is a wrapper, each field a value. */
const ENTRY_ROOTS = new Map<string, string>(
  ["kind", "data", "model", "head", "edits", "byTaskId"].map((key) => [key, `entry.${key}`]),
);

/**
 * The entry record without its id: each field checked and copied once,
 * straight into the record (no copy of the input object). An input that is
 * not a plain object takes the general copy, for the same errors.
 */
function entryRecord(
  tx: TransactionState,
  input: object,
  conversationId: ConversationId,
): Record<string, Json | undefined> & { id: number } {
  const keys = Object.keys(input);
  for (const key of keys)
    if (!ENTRY_ROOTS.has(key))
      throw new TypeError(
        `entry.${key}: not an entry field (kind, data, model, head, edits, byTaskId)`,
      );
  const proto: unknown = Object.getPrototypeOf(input);
  if (proto !== Object.prototype && proto !== null) {
    const fields = copyJson(input, "entry", { depth: -1, freeze: true }) as JsonObject;
    tx.bytes += copiedSize(fields, tx.kernel.limits, "entry") + RECORD_BYTES;
    return { id: 0, conversationId, ...fields };
  }
  if (Object.getOwnPropertySymbols(input).length > 0)
    throw new TypeError("entry: an object with symbol keys is not JSON");
  const record: Record<string, Json | undefined> & { id: number } = { id: 0, conversationId };
  tx.bytes += RECORD_BYTES;
  for (const key of keys) {
    const descriptor = Object.getOwnPropertyDescriptor(input, key);
    if (descriptor === undefined) continue;
    if (descriptor.get || descriptor.set)
      throw new TypeError(`entry.${key}: an accessor is not JSON`);
    const value: unknown = descriptor.value;
    if (value !== undefined) record[key] = copyValue(tx, value, ENTRY_ROOTS.get(key) as string);
  }
  return record;
}

/**
 * Checks and copies the entry synchronously; the one await is the id. A
 * conversation the session already knows needs no lookup (the common case).
 */
export function appendEntry(
  tx: TransactionState,
  conversationId: ConversationId,
  input: AppendEntryInput,
): Promise<EntryRecord> {
  if (typeof input !== "object" || input === null)
    throw new TypeError("entry: the input must be an object");
  const record = entryRecord(tx, input, conversationId);
  if (typeof record.kind !== "string" || record.kind === "")
    throw new TypeError("entry.kind: must be a non-empty string");
  if (record.head !== undefined) checkId("entry.head", record.head);
  if (record.byTaskId !== undefined) checkId("entry.byTaskId", record.byTaskId);
  if (record.model !== undefined && !Array.isArray(record.model))
    throw new TypeError("entry.model: must be an array of messages");
  if (record.edits !== undefined && !Array.isArray(record.edits))
    throw new TypeError("entry.edits: must be an array");
  const push = (id: number): EntryRecord => {
    tx.stillOpen();
    record.id = id;
    const entry = Object.freeze(record) as unknown as EntryRecord;
    tx.tableWrites.push({ type: "entry", value: entry });
    if (tx.entries) tx.entries.push(entry);
    else tx.entries = [entry];
    return entry;
  };
  if (Number.isSafeInteger(conversationId) && tx.localConversation(conversationId))
    return tx.kernel.mintId().then(push, tx.kernel.mintFailed);
  return tx.requireConversation(conversationId).then(() => tx.mint().then(push));
}

function pushTask(tx: TransactionState, record: TaskRecord): TaskRecord {
  const frozen = deepFreeze(record as unknown as JsonObject) as unknown as TaskRecord;
  const write: StorageWrite = { type: "task", value: frozen };
  const indexes = (tx.taskWriteIndex ??= new Map<number, number>());
  const index = indexes.get(frozen.id);
  if (index === undefined) {
    indexes.set(frozen.id, tx.tableWrites.length);
    tx.tableWrites.push(write);
  } else tx.tableWrites[index] = write;
  (tx.tasks ??= new Map()).set(frozen.id, frozen);
  return frozen;
}

/** Creates a `pending` task whose checkpoint is `token.initial(input)`. */
export async function createTask<I extends Json>(
  tx: TransactionState,
  token: TaskToken<I>,
  input: I,
  options: CreateTaskOptions,
): Promise<TaskId> {
  if (
    typeof token !== "object" ||
    token === null ||
    typeof token.name !== "string" ||
    typeof token.initial !== "function"
  )
    throw new TypeError("createTask: not a task definition ({ name, version, initial })");
  if (!Number.isSafeInteger(token.version) || token.version < 1)
    throw new TypeError(`task "${token.name}": version must be a positive integer`);
  checkTextBytes(token.name, MAX_KIND_BYTES, "task.kind");
  const frozenInput = copyValue(tx, input, "task.input") as I;
  const checkpoint = copyValue(tx, token.initial(frozenInput), "task.checkpoint");
  tx.bytes += RECORD_BYTES;
  const owner = await ownerOf(tx, options?.ownership);
  const conversationId = options.conversationId ?? owner?.conversationId;
  if (conversationId === undefined)
    throw new TypeError("createTask: an ownerless task needs a conversationId");
  await tx.requireConversation(conversationId);
  if (options.background !== undefined && typeof options.background !== "boolean")
    throw new TypeError("createTask: background must be a boolean");
  const id = (await tx.mint()) as TaskId;
  pushTask(tx, {
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
export async function putTask(tx: TransactionState, record: TaskRecord): Promise<TaskRecord> {
  const { record: copy, bound } = copyTaskRecord(record);
  tx.bytes += taskSize(copy, bound, tx.kernel.limits) + RECORD_BYTES;
  checkTaskRecord(copy);
  const previous = await tx.requireTask(copy.id);
  if (previous.conversationId !== copy.conversationId)
    throw new TypeError(
      `task.conversationId: task ${copy.id} belongs to conversation ${previous.conversationId}`,
    );
  if (isTerminal(copy) && !isTerminal(previous)) (tx.terminalTasks ??= new Set()).add(copy.id);
  return pushTask(tx, copy);
}

function pushSubmission(tx: TransactionState, record: SubmissionRecord): SubmissionRecord {
  const frozen = deepFreeze(record as unknown as JsonObject) as unknown as SubmissionRecord;
  const write: StorageWrite = { type: "submission", value: frozen };
  const indexes = (tx.submissionWriteIndex ??= new Map<number, number>());
  const index = indexes.get(frozen.id);
  if (index === undefined) {
    indexes.set(frozen.id, tx.tableWrites.length);
    tx.tableWrites.push(write);
  } else tx.tableWrites[index] = write;
  (tx.submissions ??= new Map()).set(frozen.id, frozen);
  return frozen;
}

export async function createSubmission(
  tx: TransactionState,
  conversationId: ConversationId,
  input: CreateSubmissionInput,
): Promise<SubmissionRecord> {
  if (typeof input !== "object" || input === null)
    throw new TypeError("submission: the input must be an object");
  if (input.type !== "input" && input.type !== "write")
    throw new TypeError(`submission.type: must be "input" or "write"`);
  if (input.requestId !== undefined && typeof input.requestId !== "string")
    throw new TypeError("submission.requestId: must be a string");
  if (input.requestId !== undefined)
    checkTextBytes(input.requestId, MAX_KEY_BYTES, "submission.requestId");
  const content = copyValue(tx, input.content, "submission.content");
  tx.bytes += RECORD_BYTES;
  await tx.requireConversation(conversationId);
  const id = (await tx.mint()) as SubmissionId;
  return pushSubmission(tx, {
    id,
    conversationId,
    type: input.type,
    status: "queued",
    content,
    ...(input.requestId !== undefined ? { requestId: input.requestId } : {}),
  });
}

async function requireOpenSubmission(
  tx: TransactionState,
  id: SubmissionId,
): Promise<SubmissionRecord> {
  checkId("submission", id);
  const found = tx.submissions?.get(id) ?? (await tx.findSubmission(id));
  tx.stillOpen();
  if (!found) unknown(`submission ${id}`);
  if (found.status === "done" || found.status === "unanswered")
    throw new TypeError(`submission ${id} is already settled (${found.status})`);
  return found;
}

/** Marks a queued submission placed: its entry is in the transcript. */
export async function placeSubmission(
  tx: TransactionState,
  id: SubmissionId,
  entryId: EntryId,
): Promise<SubmissionRecord> {
  const submission = await requireOpenSubmission(tx, id);
  if (submission.status !== "queued")
    throw new TypeError(`submission ${id} is ${submission.status}, not queued`);
  await tx.requireEntry(entryId);
  // The whole record is written again, content included.
  tx.bytes +=
    measuredSize(submission.content ?? null, tx.kernel.limits, "submission.content") + RECORD_BYTES;
  return pushSubmission(tx, { ...submission, status: "placed", entry: entryId });
}

export async function settleSubmission(
  tx: TransactionState,
  id: SubmissionId,
  settlement: SubmissionSettlement,
): Promise<SubmissionRecord> {
  const submission = await requireOpenSubmission(tx, id);
  // The whole record is written again, content included.
  tx.bytes +=
    measuredSize(submission.content ?? null, tx.kernel.limits, "submission.content") + RECORD_BYTES;
  if (settlement?.status === "done") {
    await tx.requireEntry(settlement.answer, "answer entry");
    return pushSubmission(tx, { ...submission, status: "done", answer: settlement.answer });
  }
  if (settlement?.status === "unanswered") {
    if (typeof settlement.reason !== "string")
      throw new TypeError("settleSubmission: reason must be a string");
    const detail =
      settlement.detail === undefined
        ? undefined
        : copyValue(tx, settlement.detail, "submission.detail");
    return pushSubmission(tx, {
      ...submission,
      status: "unanswered",
      reason: settlement.reason,
      ...(detail !== undefined ? { detail } : {}),
    });
  }
  throw new TypeError(`settleSubmission: status must be "done" or "unanswered"`);
}
