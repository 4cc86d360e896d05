import type { Seq } from "../domain/ids.js";
import type { Batch, Storage } from "../storage/port.js";

export interface QueuedBatch {
  readonly writes: Batch;
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

/**
 * The group-commit flusher: whenever storage is idle, every queued batch
 * goes out in ONE `storage.commit` call, each keeping its own seq. While a
 * call is in flight new batches queue up and leave together in the next.
 */
export class GroupCommitter<B extends QueuedBatch> {
  private queue: B[] = [];
  private running = false;
  private startTimer: ReturnType<typeof setImmediate> | undefined;
  private broken = false;
  private idleWaiters: (() => void)[] = [];
  readonly stats: GroupCommitStats = { calls: 0, batches: 0 };

  constructor(
    private readonly storage: Storage,
    private readonly handlers: GroupCommitHandlers<B>,
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
      this.startTimer ??= setImmediate(() => this.start());
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
    queueMicrotask(() => void this.run());
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

  private async run(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.broken) {
        const batches = this.queue;
        this.queue = [];
        await this.send(batches);
        this.handlers.settled?.();
      }
    } finally {
      this.running = false;
      if (this.queue.length === 0 || this.broken) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
    }
  }

  private async send(batches: B[]): Promise<void> {
    const seqs: (Seq | undefined)[] = new Array<Seq | undefined>(batches.length);
    let stored: number;
    let refused: unknown;
    this.stats.calls++;
    this.stats.batches += batches.length;
    try {
      const result = await this.storage.commit(
        batches.map((b) => b.writes),
        (index, seq) => {
          seqs[index] = seq;
        },
      );
      stored = result.stored;
      refused = result.refused;
    } catch (error) {
      this.broken = true;
      this.handlers.failed(error, batches);
      return;
    }
    if (!Number.isSafeInteger(stored) || stored < 0 || stored > batches.length) {
      this.broken = true;
      this.handlers.failed(
        new Error(
          `storage.commit returned stored = ${String(stored)} for ${batches.length} batches`,
        ),
        batches,
      );
      return;
    }
    let previous = 0;
    for (let i = 0; i < stored; i++) {
      const seq = seqs[i];
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
