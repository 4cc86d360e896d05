import type { Seq } from "../domain/ids.js";
import type { Batch, CommitResult, Storage } from "../storage/port.js";
import { beginSealedCall, endSealedCall } from "./sealed-batches.js";

export interface QueuedBatch {
  readonly writes: Batch;
  /** Its counted size in bytes of JSON text: the flusher keeps a call's sum within its budget. */
  readonly bytes: number;
}

export interface GroupCommitHandlers<B extends QueuedBatch> {
  /** Batch stored with its seq; called in order. */
  stored(batch: B, seq: Seq): void;
  /** The storage call failed or refused: `lost` are the batches that were not stored (refused one first). */
  failed(cause: unknown, lost: B[]): void;
  /** Called after each storage call has been fully handled. */
  settled?(): void;
}

/** Counters for tests and benchmarks: how well saves are grouped. */
export interface GroupCommitStats {
  /** `storage.commit` calls made. */
  calls: number;
  /** Batches carried by those calls. */
  batches: number;
}

const SETTLED = Promise.resolve();

/**
 * The flusher: whenever storage is idle, the queued batches go out in ONE
 * `storage.commit` call, each keeping its own seq, as many as fit the byte
 * budget (a batch over it alone goes alone): backends build one string or
 * statement per call, so a call's size must stay bounded. While a call is
 * in flight new batches queue up and leave together in the next. Written with bound
 * callbacks rather than an async loop: a call costs one promise reaction,
 * not the frames of two async functions.
 */
export class GroupCommitter<B extends QueuedBatch> {
  private queue: B[] = [];
  private running = false;
  private startTimer: ReturnType<typeof setImmediate> | undefined;
  private broken = false;
  private idleWaiters: (() => void)[] = [];
  /** The batches of the call in flight, and the seqs storage reported for them. */
  private inFlight: B[] = [];
  private readonly seqs: (Seq | undefined)[] = [];
  readonly stats: GroupCommitStats = { calls: 0, batches: 0 };

  private readonly receive = (index: number, seq: Seq): void => {
    this.seqs[index] = seq;
  };
  private readonly startNow = (): void => this.start();
  private readonly next = (): void => this.flush();
  private readonly onResult = (result: CommitResult): void => {
    let stored: number;
    let refused: unknown;
    try {
      ({ stored, refused } = result);
    } catch (error) {
      this.onError(error); // not a result at all
      return;
    }
    this.handle(stored, refused);
    this.done();
  };
  private readonly onError = (error: unknown): void => {
    this.broken = true;
    this.handlers.failed(error, this.inFlight.slice());
    this.done();
  };

  constructor(
    private readonly storage: Storage,
    private readonly handlers: GroupCommitHandlers<B>,
    /** Every batch queued here was built by the Session (see `isSealedBatches`). */
    private readonly sealed = false,
    /** The most one call may carry, summing the batches' `bytes` (the first batch always goes). */
    private readonly budget = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * Queues a batch. `more`: the caller knows more batches are about to be
   * queued in this turn (commits waiting on the line). An idle flusher then
   * starts on `setImmediate` instead of a microtask, so a storage that
   * finishes within microtasks (memory, synchronous SQLite) still gets the
   * whole group in one call; the wait is bounded by one event-loop turn.
   */
  enqueue(batch: B, more = false): void {
    if (this.broken) {
      this.handlers.failed(new Error("the storage pipeline already failed"), [batch]);
      return;
    }
    this.queue.push(batch);
    if (this.running) return;
    if (more) {
      this.startTimer ??= setImmediate(this.startNow);
      return;
    }
    this.start();
  }

  private start(): void {
    if (this.startTimer !== undefined) clearImmediate(this.startTimer);
    this.startTimer = undefined;
    if (this.running) return;
    // Start on a microtask so batches queued in the same turn (deferred progress
    // flushed right before an ordinary commit, say) share the first call too.
    this.running = true;
    // A reaction on a settled promise: the same microtask queue as queueMicrotask, without
    // the async-hooks resource Node allocates per queueMicrotask call.
    void SETTLED.then(this.next);
  }

  /** True when nothing is queued or in flight. */
  get idle(): boolean {
    return !this.running && this.queue.length === 0;
  }

  /** Resolves once nothing is queued or in flight. */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking batches; queued ones are reported lost. */
  break(cause: unknown): void {
    this.broken = true;
    const lost = this.queue;
    this.queue = [];
    if (lost.length > 0) this.handlers.failed(cause, lost);
  }

  /** The call in flight was handled: empty its array for reuse, then send what queued meanwhile. */
  private done(): void {
    const batches = this.inFlight;
    while (batches.length > 0) batches.pop();
    this.handlers.settled?.();
    this.flush();
  }

  /** Sends everything queued in one call, or goes idle when nothing is (or the pipeline broke). */
  private flush(): void {
    if (this.queue.length === 0 || this.broken) {
      this.running = false;
      if (this.idleWaiters.length > 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
      return;
    }
    this.running = true;
    const batches = this.take();
    // Cleared slot by slot: a storage that skips `receive` must not see an earlier call's seq.
    for (let i = 0; i < batches.length; i++) this.seqs[i] = undefined;
    this.stats.calls++;
    this.stats.batches += batches.length;
    const writes = new Array<Batch>(batches.length);
    for (let i = 0; i < batches.length; i++) writes[i] = (batches[i] as B).writes;
    let call: Promise<CommitResult>;
    const previous = this.sealed ? beginSealedCall(writes) : undefined;
    try {
      call = Promise.resolve(this.storage.commit(writes, this.receive));
    } catch (error) {
      this.onError(error);
      return;
    } finally {
      if (this.sealed) endSealedCall(previous);
    }
    call.then(this.onResult, this.onError);
  }

  /**
   * Moves the queued batches that fit the budget into `inFlight`. Usually all
   * of them: the two arrays swap roles and are emptied with pop(), which
   * keeps their storage, so a call allocates only the writes array it hands
   * to storage.
   */
  private take(): B[] {
    const queue = this.queue;
    let fit = 0;
    let bytes = 0;
    while (fit < queue.length) {
      bytes += (queue[fit] as B).bytes;
      if (fit > 0 && bytes > this.budget) break;
      fit++;
    }
    if (fit === queue.length) {
      this.queue = this.inFlight;
      this.inFlight = queue;
      return queue;
    }
    const batches = this.inFlight;
    for (let i = 0; i < fit; i++) batches.push(queue[i] as B);
    queue.splice(0, fit);
    return batches;
  }

  private handle(stored: number, refused: unknown): void {
    const batches = this.inFlight;
    if (!Number.isSafeInteger(stored) || stored < 0 || stored > batches.length) {
      this.broken = true;
      this.handlers.failed(
        new Error(
          `storage.commit returned stored = ${String(stored)} for ${batches.length} batches`,
        ),
        batches.slice(),
      );
      return;
    }
    let previous = 0;
    for (let i = 0; i < stored; i++) {
      const seq = this.seqs[i];
      if (seq === undefined || !(seq > previous)) {
        this.broken = true;
        this.handlers.failed(
          new Error(
            `storage.commit stored batch ${i} without reporting an increasing seq (got ${String(seq)})`,
          ),
          batches.slice(i),
        );
        return;
      }
      previous = seq;
      this.handlers.stored(batches[i] as B, seq);
    }
    if (stored < batches.length) {
      this.broken = true;
      this.handlers.failed(
        refused ??
          new Error(
            `storage.commit stored ${stored} of ${batches.length} batches without a reason`,
          ),
        batches.slice(stored),
      );
    }
  }
}
