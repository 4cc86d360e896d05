import {
  ROOT_CONVERSATION_ID,
  type Batch,
  type CommitResult,
  type ConversationId,
  type ConversationRecord,
  type Cursor,
  type DocumentContent,
  type DocumentId,
  type EntryRecord,
  type Json,
  type NewDocumentRecord,
  type Op,
  type Page,
  type Seq,
  type Storage,
  type StorageWrite,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import type { ExpectLike } from "./api.js";

/** What a scenario gets: the current storage, reopen (persistent adapters) and rule-aware assertions. */
export interface ScenarioContext {
  readonly storage: Storage;
  /** True when the factory passed `reopen`. */
  readonly canReopen: boolean;
  /** Reopens and returns the new current storage; fails the scenario when the factory gave no reopen. */
  reopen(): Promise<Storage>;
  readonly check: Check;
  /**
   * Marks the scenario as not applying to this storage (a capability it does
   * not declare). The scenario returns right after; the runner reports the
   * test skipped with `reason` when its test context can skip (Vitest's).
   */
  skip(reason: string): void;
}

export interface Scenario {
  readonly name: string;
  run(context: ScenarioContext): Promise<void>;
}

export interface RuleGroup {
  readonly rule: string;
  readonly scenarios: readonly Scenario[];
}

export function show(value: unknown): string {
  if (value instanceof Error) {
    const reason = (value as { reason?: unknown }).reason;
    return `${value.name}${typeof reason === "string" ? `(${reason})` : ""}: ${value.message}`;
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Assertions that prefix every failure with what was being checked (ids, seqs, the call). */
export class Check {
  constructor(
    private readonly expect: ExpectLike,
    private readonly rule: string,
  ) {}

  private run(what: string, assertion: () => void): void {
    try {
      assertion();
    } catch (error) {
      if (error instanceof Error) {
        error.message = `[${this.rule}] ${what}\n${error.message}`;
        throw error;
      }
      throw new Error(`[${this.rule}] ${what}: ${show(error)}`, { cause: error });
    }
  }

  /** Deep equality (runner's `toEqual`). */
  equal(actual: unknown, expected: unknown, what: string): void {
    this.run(what, () => this.expect(actual).toEqual(expected));
  }

  /** Identity / primitive equality (runner's `toBe`). */
  same(actual: unknown, expected: unknown, what: string): void {
    this.run(what, () => this.expect(actual).toBe(expected));
  }

  /** A condition, with the evidence in the message. */
  ok(condition: boolean, what: string): void {
    this.run(what, () => this.expect(condition).toBe(true));
  }

  /** Fails with `what` unconditionally. */
  fail(what: string): never {
    const error = new Error(`[${this.rule}] ${what}`);
    throw error;
  }

  /** Awaits a promise that must reject with an error of `name` (and `reason`, for StorageRequestError / BatchRefused). */
  async rejects(
    promise: Promise<unknown>,
    expected: { name: string; reason?: string },
    what: string,
  ): Promise<Error> {
    let value: unknown;
    try {
      value = await promise;
    } catch (error) {
      const actual = {
        name: error instanceof Error ? error.name : typeof error,
        ...(expected.reason === undefined
          ? {}
          : { reason: (error as { reason?: unknown } | null)?.reason }),
      };
      this.equal(
        actual,
        expected,
        `${what}: expected a rejection with ${show(expected)}, got ${show(error)}`,
      );
      return error as Error;
    }
    return this.fail(
      `${what}: expected a rejection with ${show(expected)}, but it resolved with ${show(value)}`,
    );
  }

  /** Awaits a promise that must resolve; a rejection fails with `what` and the error. */
  async resolves<T>(promise: Promise<T>, what: string): Promise<T> {
    try {
      return await promise;
    } catch (error) {
      return this.fail(`${what}: expected it to resolve, it rejected with ${show(error)}`);
    }
  }
}

export function scenario(name: string, run: (context: ScenarioContext) => Promise<void>): Scenario {
  return { name, run };
}

// ---- record builders: complete, valid records with overridable fields ----

export const ROOT = ROOT_CONVERSATION_ID;

export function conversation(id: number, extra: Partial<ConversationRecord> = {}): StorageWrite {
  return { type: "conversation", value: { id: id as ConversationId, ...extra } };
}

export function entry(
  id: number,
  conversationId: number,
  extra: Partial<EntryRecord> = {},
): StorageWrite {
  return {
    type: "entry",
    value: { id, conversationId, kind: "message", data: { n: id }, ...extra } as EntryRecord,
  };
}

export function task(
  id: number,
  conversationId: number,
  extra: Partial<TaskRecord> = {},
): StorageWrite {
  return {
    type: "task",
    value: {
      id,
      conversationId,
      kind: "job",
      version: 1,
      input: { n: id },
      background: false,
      abortRequested: false,
      state: { status: "pending", checkpoint: null },
      ...extra,
    } as TaskRecord,
  };
}

export function submission(
  id: number,
  conversationId: number,
  extra: Partial<SubmissionRecord> = {},
): StorageWrite {
  return {
    type: "submission",
    value: { id, conversationId, type: "input", status: "queued", ...extra } as SubmissionRecord,
  };
}

export type DocOptions = Partial<Omit<NewDocumentRecord, "id">>;

export function docRecord(id: number, options: DocOptions = {}): NewDocumentRecord {
  return { id: id as DocumentId, kind: "notes", scope: { kind: "session" }, ...options };
}

export function createDoc(
  id: number,
  value: Json,
  options: DocOptions = {},
  version = 1,
): StorageWrite {
  return {
    type: "document.create",
    record: docRecord(id, options),
    content: { kind: "base", version, value },
  };
}

export function copyDoc(
  id: number,
  sourceId: number,
  at: number | "current",
  options: DocOptions = {},
): StorageWrite {
  return {
    type: "document.copy",
    record: docRecord(id, options),
    source: { id: sourceId as DocumentId, at: at as Seq | "current" },
  };
}

export function changeDoc(id: number, content: DocumentContent): StorageWrite {
  return { type: "document.change", id: id as DocumentId, content };
}

export function delta(id: number, version: number, ...ops: Op[]): StorageWrite {
  return changeDoc(id, { kind: "delta", version, ops });
}

export function base(id: number, version: number, value: Json): StorageWrite {
  return changeDoc(id, { kind: "base", version, value });
}

export function retireDoc(id: number): StorageWrite {
  return { type: "document.retire", id: id as DocumentId };
}

/** A conversation-scoped rewindable document's options. */
export function rewindable(conversationId: number, extra: DocOptions = {}): DocOptions {
  return {
    scope: { kind: "conversation", conversationId: conversationId as ConversationId },
    history: "rewindable",
    ...extra,
  };
}

// ---- calls with built-in checks ----

export interface Received {
  result: CommitResult;
  calls: [index: number, seq: number][];
}

/** Commits and records every `receive` call, checking nothing. */
export async function commitRaw(storage: Storage, batches: readonly Batch[]): Promise<Received> {
  const calls: [number, number][] = [];
  const result = await storage.commit(batches, (index, seq) => calls.push([index, seq]));
  return { result, calls };
}

/** Commits batches that must all be stored; returns their seqs. */
export async function commitAll(
  check: Check,
  storage: Storage,
  batches: readonly Batch[],
  what = "commit",
): Promise<number[]> {
  const { result, calls } = await check.resolves(commitRaw(storage, batches), what);
  check.equal(
    {
      stored: result.stored,
      refused: result.refused === undefined ? undefined : show(result.refused),
    },
    { stored: batches.length, refused: undefined },
    `${what}: all ${batches.length} batch(es) should be stored`,
  );
  check.equal(
    calls.map(([index]) => index),
    batches.map((_, i) => i),
    `${what}: receive(index, seq) should be called once per stored batch in index order, got ${show(calls)}`,
  );
  return calls.map(([, seq]) => seq);
}

/** Commits one batch that must be stored; returns its seq. */
export async function commitOne(
  check: Check,
  storage: Storage,
  batch: Batch,
  what = "commit",
): Promise<number> {
  const [seq] = await commitAll(check, storage, [batch], what);
  return seq as number;
}

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && key in value
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** Commits and expects the batch at `batchIndex` refused with `reason`; earlier ones stored. */
export async function commitRefused(
  check: Check,
  storage: Storage,
  batches: readonly Batch[],
  reason: string,
  batchIndex: number,
  what: string,
): Promise<Received> {
  const received = await check.resolves(commitRaw(storage, batches), what);
  const refused = received.result.refused;
  check.equal(
    {
      stored: received.result.stored,
      refused:
        refused === undefined
          ? "nothing refused"
          : {
              name: field(refused, "name"),
              reason: field(refused, "reason"),
              batchIndex: field(refused, "batchIndex"),
            },
    },
    { stored: batchIndex, refused: { name: "BatchRefused", reason, batchIndex } },
    `${what}: expected batch ${batchIndex} refused with "${reason}" (${batchIndex} stored before it), got ${show(received.result.refused ?? received.result)}`,
  );
  check.equal(
    received.calls.map(([index]) => index),
    Array.from({ length: batchIndex }, (_, i) => i),
    `${what}: receive should be called only for the ${batchIndex} stored batch(es)`,
  );
  return received;
}

/** `n` freshly minted ids, ascending. */
export async function mintIds(storage: Storage, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push(await storage.mintId());
  return ids.sort((a, b) => a - b);
}

/** Stores the root conversation (most scenarios need one). */
export async function withRoot(check: Check, storage: Storage): Promise<void> {
  await commitOne(check, storage, [conversation(ROOT)], "commit the root conversation");
}

/**
 * Follows `next` until it is absent, checking page sizes and that `next`
 * appears iff more items follow. Returns every item in scan order.
 */
export async function scanAll<T>(
  check: Check,
  what: string,
  limit: number,
  scan: (cursor: Cursor | undefined) => Promise<Page<T>>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: Cursor | undefined;
  for (let page = 0; ; page++) {
    if (page > 10_000) check.fail(`${what}: more than 10000 pages; the cursor never ends`);
    const result = await check.resolves(scan(cursor), `${what} page ${page}`);
    check.ok(
      result.items.length <= limit,
      `${what} page ${page}: at most limit ${limit} items expected, got ${result.items.length}`,
    );
    if (page > 0 && result.items.length === 0)
      check.fail(
        `${what} page ${page - 1}: carried next, but no more items followed (next must be present iff more items follow)`,
      );
    items.push(...result.items);
    if (result.next === undefined) return items;
    cursor = JSON.parse(JSON.stringify(result.next)) as Cursor;
  }
}

export function idsOf(items: readonly { id: number }[]): number[] {
  return items.map((item) => item.id);
}

export function ascending(ids: readonly number[]): number[] {
  return [...ids].sort((a, b) => a - b);
}

export function descending(ids: readonly number[]): number[] {
  return [...ids].sort((a, b) => b - a);
}
