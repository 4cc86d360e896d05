import type { Seq } from "../domain/ids.js";
import type { Batch } from "../storage/port.js";
import type { PreparedCommit } from "./prepared.js";
import type { Transaction } from "./transaction.js";

export type Resolvers<T> = { resolve: (value: T) => void; reject: (error: unknown) => void };

export function withResolvers<T>(): Resolvers<T> & { promise: Promise<T> } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The item whose promise is being made: the executor runs synchronously, so no closure per commit is needed. */
let making: CommitItem | undefined;
function capture(resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  const item = making as CommitItem;
  item.resolve = resolve;
  item.reject = reject;
}

/**
 * One commit from the call until it is published: the request waiting for
 * the line, then the sealed commit in the pipeline (an ordinary commit is its
 * own storage batch), the overlay layer and the publication queue. One
 * object per commit: the hot path allocates as little as it can.
 */
export class CommitItem {
  resolve!: (value: unknown) => void;
  reject!: (error: unknown) => void;
  promise!: Promise<unknown>;
  /** The callback's value once it returned. */
  value: unknown = undefined;
  prepared: PreparedCommit | null = null;
  /** The batch as the flusher sends it (set when queued). */
  writes: Batch = [];
  /** Its counted size in bytes of JSON text (set when queued; see `PreparedCommit.bytes`). */
  bytes = 0;
  stored = false;
  published = false;
  /** An empty commit waiting for the deferred progress it flushed to be stored. */
  awaiting = false;
  seq: Seq | undefined = undefined;
  storedWaiters: Resolvers<Seq>[] | undefined = undefined;
  onAbort: (() => void) | undefined = undefined;

  constructor(
    readonly callback: (tx: Transaction) => unknown,
    readonly deferred: boolean,
    readonly signal: AbortSignal | undefined,
  ) {}
}

/** A new commit item with its promise. */
export function commitItem(
  callback: (tx: Transaction) => unknown,
  deferred: boolean,
  signal: AbortSignal | undefined,
): CommitItem {
  const item = new CommitItem(callback, deferred, signal);
  making = item;
  item.promise = new Promise(capture);
  making = undefined;
  return item;
}

/** A batch that is not one ordinary commit: coalesced deferred progress, or the root at open. */
export interface GroupBatch {
  readonly writes: Batch;
  /** The counted size of the commits it carries. */
  readonly bytes: number;
  readonly items: readonly CommitItem[];
  readonly deferred: boolean;
  readonly done: Resolvers<Seq>;
}
