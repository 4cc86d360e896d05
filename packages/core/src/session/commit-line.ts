import { SessionClosed, SessionFailed } from "../domain/errors.js";
import type { EntryId, Seq } from "../domain/ids.js";
import type { ConversationRecord } from "../domain/records.js";
import type { Batch, Storage } from "../storage/port.js";
import { CommitItem, type GroupBatch, withResolvers } from "./commit-item.js";
import { DeferredProgress } from "./deferred-progress.js";
import { DocCache } from "./doc-cache.js";
import { FailureListeners } from "./failure-listeners.js";
import { GroupCommitter, type GroupCommitStats } from "./group-commit.js";
import type { Kernel } from "./kernel.js";
import type { ValueLimits } from "./value-size.js";
import { Overlay } from "./overlay.js";
import type { DocChange, PreparedCommit } from "./prepared.js";
import { Transaction } from "./transaction.js";
import { CommitSubscribers, DocWatches, type ListenerErrorHandler } from "./watches.js";

const KNOWN_CONVERSATIONS = 10_000;

/** A promise rejected with `error`, whatever it is (a storage may throw anything). */
// eslint-disable-next-line @typescript-eslint/require-await -- the async function is how the rejection is made
async function rejection(error: unknown): Promise<never> {
  throw error;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

type PipelineBatch = CommitItem | GroupBatch;

/**
 * The commit line: callbacks run one at a time, each sealed commit enters
 * the overlay and the group-commit pipeline, and commits are published in
 * line order once stored (deferred ones at once). It also holds the failed
 * state: a storage failure fails every pending and later call.
 */
export class CommitLine {
  readonly overlay = new Overlay<CommitItem>((item) => item.prepared as PreparedCommit);
  readonly docs: DocCache;
  readonly watches: DocWatches;
  readonly subscribers: CommitSubscribers;
  /** Told once when the session fails, so waits that only stored commits could end reject instead. */
  readonly failureListeners: FailureListeners;
  readonly kernel: Kernel;
  readonly deferred: DeferredProgress<CommitItem>;
  private readonly pipeline: GroupCommitter<PipelineBatch>;
  private readonly known = new Map<number, ConversationRecord>();
  private waiting: CommitItem[] = [];
  private lineBusy = false;
  /** A commit callback is executing synchronously: a `commit` call now comes from inside it. */
  inCallback = false;
  private lineIdleWaiters: (() => void)[] = [];
  private publications: CommitItem[] = [];
  private failure: SessionFailed | undefined;
  closed = false;

  constructor(
    readonly storage: Storage,
    private readonly onListenerError: ListenerErrorHandler,
    persistWithinMs: number,
    documentCacheSize: number,
    limits: ValueLimits,
  ) {
    this.watches = new DocWatches(onListenerError);
    this.subscribers = new CommitSubscribers(onListenerError);
    this.failureListeners = new FailureListeners(onListenerError);
    this.docs = new DocCache(storage, documentCacheSize, (key) => this.watches.has(key));
    this.pipeline = new GroupCommitter<PipelineBatch>(
      storage,
      {
        stored: (batch, seq) => this.onStored(batch, seq),
        failed: (cause, lost) => this.onStorageFailed(cause, lost),
      },
      true, // every batch is sealed by a transaction, coalesced from sealed ones, or the frozen root
      limits.commitBytes, // one storage call carries at most what one commit may write
    );
    this.deferred = new DeferredProgress<CommitItem>(
      persistWithinMs,
      (writes, items, bytes) => this.enqueueGroup(writes, items, true, bytes),
      limits.commitBytes,
    );
    this.kernel = {
      storage,
      overlay: this.overlay,
      docs: this.docs,
      limits,
      check: () => this.checkUsable(),
      mintId: () => this.mintId(),
      mintFailed: (error) => this.mintFailed(error),
      knownConversation: (id) => this.known.get(id),
      rememberConversation: (record) => this.remember(record),
      entrySeq: (id) => this.entrySeq(id),
    };
  }

  /** The error the session failed with, if it did. */
  get failed(): SessionFailed | undefined {
    return this.failure;
  }

  get stats(): Readonly<GroupCommitStats> {
    return { ...this.pipeline.stats };
  }

  // ---- the line -------------------------------------------------------------

  /** Queues a commit for the line; its promise settles once published (or rejected). */
  submit(item: CommitItem): void {
    const { signal } = item;
    if (signal) {
      item.onAbort = () => {
        const index = this.waiting.indexOf(item);
        if (index === -1) return; // already admitted: cancelling does not undo it
        this.waiting.splice(index, 1);
        item.reject(signal.reason);
      };
      signal.addEventListener("abort", item.onAbort, { once: true });
    }
    this.waiting.push(item);
    this.pumpLine();
  }

  private pumpLine(): void {
    if (this.lineBusy) return;
    const next = this.waiting.shift();
    if (!next) {
      if (this.lineIdleWaiters.length > 0) {
        const waiters = this.lineIdleWaiters;
        this.lineIdleWaiters = [];
        for (const resolve of waiters) resolve();
      }
      return;
    }
    this.lineBusy = true;
    void this.runOnLine(next);
  }

  whenLineIdle(): Promise<void> {
    if (!this.lineBusy && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.lineIdleWaiters.push(resolve));
  }

  /** Rejects every commit not yet admitted to the line. */
  rejectWaiting(error: () => unknown): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const item of waiting) {
      if (item.signal && item.onAbort) item.signal.removeEventListener("abort", item.onAbort);
      item.reject(error());
    }
  }

  private async runOnLine(item: CommitItem): Promise<void> {
    try {
      if (item.signal && item.onAbort) item.signal.removeEventListener("abort", item.onAbort);
      if (this.failure) {
        item.reject(this.failure);
        return;
      }
      const tx = new Transaction(this.kernel, item.deferred);
      let prepared: PreparedCommit | null;
      try {
        try {
          let returned: unknown;
          this.inCallback = true;
          try {
            returned = item.callback(tx);
          } finally {
            this.inCallback = false;
          }
          item.value = await returned;
        } catch (error) {
          // Wait for what it started (nothing of it may run on after the discard); the callback's own error is reported.
          const settling = tx.whenSettled();
          if (settling) await settling;
          throw error;
        }
        const settling = tx.whenSettled();
        if (settling) await settling;
        // A failed write fails the commit whole, however the callback awaited or caught it.
        const failed = tx.operationFailure;
        if (failed) throw failed.error;
        this.throwIfFailed();
        const sealed = tx.seal();
        prepared = sealed instanceof Promise ? await sealed : sealed;
        this.throwIfFailed();
      } catch (error) {
        tx.discard();
        item.reject(this.failure ?? error);
        return;
      }
      this.accept(item, prepared);
    } finally {
      this.lineBusy = false;
      this.pumpLine();
    }
  }

  /** A sealed commit enters the overlay, the pipeline (or the deferred buffer) and the publication queue. */
  private accept(item: CommitItem, prepared: PreparedCommit | null): void {
    item.prepared = prepared;
    if (prepared) {
      this.overlay.add(item);
      const { docs } = prepared;
      for (let i = 0; i < docs.length; i++) this.docs.push(item, docs[i] as DocChange);
      if (item.deferred) this.deferred.add(item);
      else {
        // An ordinary commit stores pending deferred progress first (same storage call), preserving order.
        if (this.deferred.pending) void this.deferred.flush();
        item.writes = prepared.writes;
        item.bytes = prepared.bytes;
        // Commits waiting on the line are about to queue their batches too: let them share the call.
        this.pipeline.enqueue(item, this.waiting.length > 0);
      }
    } else if (!item.deferred && this.deferred.pending) {
      // An empty ordinary commit may have read deferred progress: it resolves once that is stored.
      item.awaiting = true;
      this.deferred.flush().then(
        () => {
          item.awaiting = false;
          this.drainPublications();
        },
        () => undefined, // the session failed: fail() rejects the item
      );
    }
    this.publications.push(item);
    this.drainPublications();
  }

  /** Queues a batch that is not one ordinary commit; resolves with its seq once stored. */
  enqueueGroup(
    writes: Batch,
    items: readonly CommitItem[],
    deferred: boolean,
    bytes = 0,
  ): Promise<Seq> {
    const done = withResolvers<Seq>();
    this.pipeline.enqueue({ writes, bytes, items, deferred, done });
    return done.promise;
  }

  whenStored(): Promise<void> {
    return this.pipeline.whenIdle();
  }

  // ---- storage outcomes -------------------------------------------------------

  private onStored(batch: PipelineBatch, seq: Seq): void {
    if (batch instanceof CommitItem) {
      this.storedItem(batch, seq, false);
      if (!this.subscribers.empty)
        this.subscribers.notify({ seq, writes: batch.writes, deferred: false });
    } else {
      for (const item of batch.items) this.storedItem(item, seq, batch.deferred);
      for (const write of batch.writes)
        if (write.type === "conversation") this.remember(write.value);
      batch.done.resolve(seq);
      if (!this.subscribers.empty)
        this.subscribers.notify({ seq, writes: batch.writes, deferred: batch.deferred });
    }
    this.drainPublications();
  }

  private storedItem(item: CommitItem, seq: Seq, inGroup: boolean): void {
    item.stored = true;
    item.seq = seq;
    const layer = item.prepared as PreparedCommit;
    this.overlay.drop(item);
    this.docs.adopt(item, layer.docs, seq);
    if (item.storedWaiters) {
      for (const waiter of item.storedWaiters) waiter.resolve(seq);
      item.storedWaiters = undefined;
    }
    if (inGroup) this.runHooks(layer, seq);
    else
      for (let i = 0; i < layer.conversations.length; i++)
        this.remember(layer.conversations[i] as ConversationRecord);
  }

  private onStorageFailed(cause: unknown, lost: PipelineBatch[]): void {
    this.fail(cause, "storage.commit failed");
    for (const batch of lost) {
      if (batch instanceof CommitItem) this.rejectItem(batch);
      else {
        batch.done.reject(this.failure);
        for (const item of batch.items) this.rejectItem(item);
      }
    }
  }

  private rejectItem(item: CommitItem): void {
    const failure = this.failure as SessionFailed;
    if (item.storedWaiters) for (const waiter of item.storedWaiters) waiter.reject(failure);
    item.storedWaiters = undefined;
    if (!item.published) {
      item.published = true;
      item.reject(failure);
    }
  }

  /** Enters the failed state: every pending and later call rejects with `SessionFailed`. */
  fail(cause: unknown, what: string): void {
    if (this.failure) return;
    const failure = new SessionFailed(
      `the session failed (${what}: ${describe(cause)}); close it and reopen the storage`,
      { cause },
    );
    this.failure = failure;
    const deferred = this.deferred.drop();
    this.pipeline.break(cause);
    this.rejectWaiting(() => failure);
    for (const item of this.publications) if (!item.stored) this.rejectItem(item);
    this.publications = this.publications.filter((item) => item.stored && !item.published);
    for (const item of deferred) this.rejectItem(item);
    this.drainPublications();
    this.failureListeners.notify(failure);
  }

  // ---- publication ------------------------------------------------------------

  /** Publishes line items in line order: ordinary ones once stored, deferred and empty ones at once. */
  private drainPublications(): void {
    while (this.publications.length > 0) {
      const item = this.publications[0] as CommitItem;
      if (!item.published) {
        const ready = item.prepared === null ? !item.awaiting : item.deferred || item.stored;
        if (!ready) return;
      }
      this.publications.shift();
      if (!item.published) this.publish(item);
    }
  }

  private publish(item: CommitItem): void {
    item.published = true;
    const layer = item.prepared;
    if (layer) {
      // A stored commit's states were adopted already: only unstored (deferred) ones are marked.
      if (!item.stored) this.docs.markPublished(item, layer.docs);
      if (!this.watches.empty)
        for (const change of layer.docs)
          this.watches.notify(change.addressKey, change.state, change.ops);
      if (!item.deferred) this.runHooks(layer, item.seq);
    }
    item.resolve(item.value);
  }

  private runHooks(layer: PreparedCommit, seq: Seq | undefined): void {
    const hooks = layer.afterCommit;
    if (hooks.length === 0) return;
    for (const hook of hooks) {
      try {
        hook({ seq });
      } catch (error) {
        this.onListenerError(error, "afterCommit hook");
      }
    }
  }

  // ---- kernel services --------------------------------------------------------

  throwIfFailed(): void {
    const failure = this.failure;
    if (failure) throw failure;
  }

  checkUsable(): void {
    if (this.failure) throw this.failure;
    if (this.closed) throw new SessionClosed("the session is closed");
  }

  /** Storage's promise itself (no wrapper per id); its rejection goes through `mintFailed`. */
  private mintId(): Promise<number> {
    this.checkUsable();
    try {
      return Promise.resolve(this.storage.mintId());
    } catch (error) {
      return rejection(error);
    }
  }

  private mintFailed(error: unknown): never {
    this.fail(error, "storage.mintId failed");
    throw this.failure as SessionFailed;
  }

  remember(record: ConversationRecord): void {
    if (this.known.size >= KNOWN_CONVERSATIONS)
      this.known.delete(this.known.keys().next().value as number);
    this.known.set(record.id, record);
  }

  /** The seq of the commit that wrote an entry, waiting for a prepared commit to be stored when needed. */
  async entrySeq(id: EntryId): Promise<Seq | undefined> {
    const item = this.overlay.entries.layerOf(id);
    // A commit of a failed session is never stored: storage answers for it.
    if (item && !item.stored && !this.failure) {
      if (item.deferred) void this.deferred.flush();
      const waiter = withResolvers<Seq>();
      (item.storedWaiters ??= []).push(waiter);
      return waiter.promise;
    }
    if (item?.seq !== undefined) return item.seq;
    return (await this.storage.entry(id))?.commitSeq;
  }
}
