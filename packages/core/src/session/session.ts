import { NestedCommit, SessionClosed, SessionFailed, UnknownRecord } from "../domain/errors.js";
import {
  ROOT_CONVERSATION_ID,
  type ConversationId,
  type EntryId,
  type Seq,
} from "../domain/ids.js";
import type { ConversationRecord } from "../domain/records.js";
import type { Batch, CallOptions, Storage } from "../storage/port.js";
import { incarnationFrom, DocCache } from "./doc-cache.js";
import { checkVersion, readAs } from "./doc-versions.js";
import { coalesce } from "./deferred.js";
import { FailureListeners, type FailureListener } from "./failure-listeners.js";
import { GroupCommitter, type GroupCommitStats } from "./group-commit.js";
import type { Kernel } from "./kernel.js";
import { Overlay } from "./overlay.js";
import type { PreparedCommit } from "./prepared.js";
import { SessionReader } from "./reader.js";
import {
  addressKey,
  addressOf,
  type AnyDocToken,
  type DocFamilyToken,
  type DocScopeKind,
  type DocToken,
  type DocValue,
} from "./tokens.js";
import { Transaction } from "./transaction.js";
import {
  CommitSubscribers,
  DocWatches,
  reportToConsole,
  type CommitListener,
  type DocListener,
  type ListenerErrorHandler,
} from "./watches.js";

export interface SessionSettings {
  progress?: {
    /** Longest time deferred progress waits before it is stored (default 1000 ms). */
    persistWithinMs?: number;
  };
}

export interface SessionOptions extends CallOptions {
  /** Milliseconds since the epoch; tasks stamp `startedAt` / `endedAt` with it. Default `Date.now`. */
  clock?: () => number;
  settings?: SessionSettings;
  /** Where errors thrown by watchers, subscribers and afterCommit hooks go (default: console.error). */
  onListenerError?: ListenerErrorHandler;
  /** Document states kept in memory beyond those with pending changes (default 4096). */
  documentCacheSize?: number;
}

export interface CommitOptions extends CallOptions {
  /** "deferred": applied and published at once, stored later, coalesced (progress output). */
  durability?: "deferred";
}

type Resolvers<T> = { resolve: (value: T) => void; reject: (error: unknown) => void };

interface Waiting {
  readonly callback: (tx: Transaction) => unknown;
  readonly deferred: boolean;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
  readonly settle: Resolvers<unknown>;
}

/** One commit from the line, in line order, until it is published. */
interface LineItem {
  readonly prepared: PreparedCommit | null;
  readonly deferred: boolean;
  readonly value: unknown;
  readonly settle: Resolvers<unknown>;
  stored: boolean;
  published: boolean;
  /** An empty commit waiting for the deferred progress it flushed to be stored. */
  awaiting: boolean;
  seq: Seq | undefined;
  storedWaiters: Resolvers<Seq>[];
}

/** A batch handed to the flusher: one ordinary commit, a group of deferred ones, or the root creation. */
interface PipelineBatch {
  readonly writes: Batch;
  readonly items: readonly LineItem[];
  readonly deferred: boolean;
  readonly done?: Resolvers<Seq>;
}

const DEFAULT_PERSIST_WITHIN_MS = 1000;
const KNOWN_CONVERSATIONS = 10_000;

function withResolvers<T>(): Resolvers<T> & { promise: Promise<T> } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The Session kernel: the commit line, group commit,
 * read-your-writes across the pipeline, documents, watches, deferred
 * progress and the failure semantics (docs/architecture.md, section 7).
 */
export class Session {
  /** The session clock (ms since the epoch). */
  readonly clock: () => number;
  /** Reads of stored state outside a commit (deferred table writes are stored first). */
  readonly read: SessionReader;

  private readonly overlay = new Overlay();
  private readonly docs: DocCache;
  private readonly watches: DocWatches;
  private readonly subscribers: CommitSubscribers;
  private readonly failureListeners: FailureListeners;
  private readonly onListenerError: ListenerErrorHandler;
  private readonly pipeline: GroupCommitter<PipelineBatch>;
  private readonly kernel: Kernel;
  private readonly persistWithinMs: number;
  private readonly known = new Map<number, ConversationRecord>();
  /**
   * Line items of prepared commits until they are stored or rejected. A Map
   * with explicit deletes, not a WeakMap: a long-lived WeakMap's entries
   * survive every scavenge, which promoted each commit's garbage to old space.
   */
  private readonly itemOf = new Map<PreparedCommit, LineItem>();

  private waiting: Waiting[] = [];
  private lineBusy = false;
  /** A commit callback is executing synchronously: a `commit` call now comes from inside it. */
  private inCallback = false;
  private lineIdleWaiters: (() => void)[] = [];
  private publications: LineItem[] = [];
  private deferredLayers: PreparedCommit[] = [];
  private deferredTimer: ReturnType<typeof setTimeout> | undefined;
  private failure: SessionFailed | undefined;
  private closing: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private readonly storage: Storage,
    options: SessionOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.onListenerError = options.onListenerError ?? reportToConsole;
    this.persistWithinMs = options.settings?.progress?.persistWithinMs ?? DEFAULT_PERSIST_WITHIN_MS;
    if (!(this.persistWithinMs >= 0 && Number.isFinite(this.persistWithinMs)))
      throw new TypeError(
        `settings.progress.persistWithinMs must be a non-negative number, got ${String(this.persistWithinMs)}`,
      );
    this.watches = new DocWatches(this.onListenerError);
    this.subscribers = new CommitSubscribers(this.onListenerError);
    this.failureListeners = new FailureListeners(this.onListenerError);
    this.docs = new DocCache(storage, options.documentCacheSize ?? 4096, (key) =>
      this.watches.has(key),
    );
    this.pipeline = new GroupCommitter<PipelineBatch>(storage, {
      stored: (batch, seq) => this.onStored(batch, seq),
      failed: (cause, lost) => this.onStorageFailed(cause, lost),
    });
    this.kernel = {
      storage,
      overlay: this.overlay,
      docs: this.docs,
      check: () => this.checkUsable(),
      mintId: () => this.mintId(),
      knownConversation: (id) => this.known.get(id),
      rememberConversation: (record) => this.remember(record),
      entrySeq: (id) => this.entrySeq(id),
    };
    this.read = new SessionReader(storage, () => this.beforeRead());
  }

  /**
   * Opens a session over a storage it then owns (`close()` closes it). A new
   * storage gets the root conversation (id 1) as its first commit.
   */
  static async open(storage: Storage, options: SessionOptions = {}): Promise<Session> {
    options.signal?.throwIfAborted();
    const session = new Session(storage, options);
    const root = await storage.conversation(ROOT_CONVERSATION_ID, options);
    if (root) session.remember(root);
    else await session.storeRaw([{ type: "conversation", value: { id: ROOT_CONVERSATION_ID } }]);
    return session;
  }

  /** Counters of the group-commit flusher: storage calls and the batches they carried. */
  get commitStats(): Readonly<GroupCommitStats> {
    return { ...this.pipeline.stats };
  }

  /** The error the session failed with, if it did. */
  get failed(): SessionFailed | undefined {
    return this.failure;
  }

  /**
   * Calls `listener(failure)` once when the session fails (on a microtask
   * when it has failed already): waits that only stored commits could end
   * reject with it instead of waiting forever. Returns the disposer.
   */
  onFailure(listener: FailureListener): () => void {
    if (typeof listener !== "function")
      throw new TypeError("onFailure: listener must be a function");
    return this.failureListeners.add(listener);
  }

  // ---- commits ------------------------------------------------------------

  /**
   * Runs `callback` on the commit line and stores what it wrote as one batch
   * (all or nothing). Resolves with the callback's value once the batch is
   * stored and published; a deferred commit resolves once published.
   */
  commit<T>(
    callback: (tx: Transaction) => T | Promise<T>,
    options: CommitOptions = {},
  ): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing || this.closed)
      return Promise.reject(new SessionClosed("the session is closed"));
    // Deferred progress is exempt: output writers (a tool's api.output) commit from anywhere, never awaiting the line.
    if (this.inCallback && options.durability !== "deferred")
      return Promise.reject(
        new NestedCommit(
          "session.commit was called inside a commit callback: it would wait for the callback and the callback for it; write through the callback's tx instead",
        ),
      );
    if (typeof callback !== "function")
      return Promise.reject(new TypeError("commit: callback must be a function"));
    if (options.durability !== undefined && options.durability !== "deferred")
      return Promise.reject(new TypeError(`commit: durability must be "deferred" or absent`));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    const settle = withResolvers<unknown>();
    const holder: { entry?: Waiting } = {};
    const onAbort = signal
      ? () => {
          const index = holder.entry ? this.waiting.indexOf(holder.entry) : -1;
          if (index === -1) return; // already admitted: cancelling does not undo it
          this.waiting.splice(index, 1);
          settle.reject(signal.reason);
        }
      : undefined;
    const entry: Waiting = {
      callback,
      deferred: options.durability === "deferred",
      signal,
      onAbort,
      settle,
    };
    holder.entry = entry;
    if (signal && onAbort) signal.addEventListener("abort", onAbort, { once: true });
    this.waiting.push(entry);
    this.pumpLine();
    return settle.promise as Promise<T>;
  }

  private pumpLine(): void {
    if (this.lineBusy) return;
    const next = this.waiting.shift();
    if (!next) {
      const waiters = this.lineIdleWaiters;
      this.lineIdleWaiters = [];
      for (const resolve of waiters) resolve();
      return;
    }
    this.lineBusy = true;
    void this.runOnLine(next).finally(() => {
      this.lineBusy = false;
      this.pumpLine();
    });
  }

  private whenLineIdle(): Promise<void> {
    if (!this.lineBusy && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.lineIdleWaiters.push(resolve));
  }

  private async runOnLine(request: Waiting): Promise<void> {
    if (request.signal && request.onAbort)
      request.signal.removeEventListener("abort", request.onAbort);
    if (this.failure) {
      request.settle.reject(this.failure);
      return;
    }
    const tx = new Transaction(this.kernel, request.deferred);
    let value: unknown;
    let prepared: PreparedCommit | null;
    try {
      try {
        let returned: unknown;
        this.inCallback = true;
        try {
          returned = request.callback(tx);
        } finally {
          this.inCallback = false;
        }
        value = await returned;
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
      prepared = await tx.seal();
      this.throwIfFailed();
    } catch (error) {
      tx.discard();
      request.settle.reject(this.failure ?? error);
      return;
    }
    this.accept(prepared, request.deferred, value, request.settle);
  }

  /** A sealed commit enters the overlay, the pipeline (or the deferred buffer) and the publication queue. */
  private accept(
    prepared: PreparedCommit | null,
    deferred: boolean,
    value: unknown,
    settle: Resolvers<unknown>,
  ): void {
    const item: LineItem = {
      prepared,
      deferred,
      value,
      settle,
      stored: false,
      published: false,
      awaiting: false,
      seq: undefined,
      storedWaiters: [],
    };
    if (prepared) {
      this.itemOf.set(prepared, item);
      this.overlay.add(prepared);
      for (const change of prepared.docs)
        this.docs.push(change.addressKey, change.address, prepared, change, change.basedOn);
      if (deferred) {
        this.deferredLayers.push(prepared);
        this.armDeferredTimer();
      } else {
        // An ordinary commit stores pending deferred progress first (same storage call), preserving order.
        if (this.deferredLayers.length > 0) void this.flushDeferred();
        // Commits waiting on the line are about to queue their batches too: let them share the call.
        this.pipeline.enqueue(
          { writes: prepared.writes, items: [item], deferred: false },
          this.waiting.length > 0,
        );
      }
    } else if (!deferred && this.deferredLayers.length > 0) {
      // An empty ordinary commit may have read deferred progress: it resolves once that is stored.
      item.awaiting = true;
      this.flushDeferred().then(
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

  /** Stores a batch that is not a transaction (the root conversation at open). */
  private async storeRaw(writes: Batch): Promise<Seq> {
    const done = withResolvers<Seq>();
    this.pipeline.enqueue({ writes, items: [], deferred: false, done });
    return done.promise;
  }

  // ---- storage outcomes ---------------------------------------------------

  private onStored(batch: PipelineBatch, seq: Seq): void {
    for (const item of batch.items) {
      item.stored = true;
      item.seq = seq;
      const layer = item.prepared as PreparedCommit;
      this.itemOf.delete(layer);
      this.overlay.drop(layer);
      this.docs.adopt(layer, seq);
      for (const waiter of item.storedWaiters) waiter.resolve(seq);
      item.storedWaiters = [];
      if (batch.deferred) this.runHooks(layer, seq);
    }
    for (const write of batch.writes) if (write.type === "conversation") this.remember(write.value);
    batch.done?.resolve(seq);
    if (!this.subscribers.empty)
      this.subscribers.notify({ seq, writes: batch.writes, deferred: batch.deferred });
    this.drainPublications();
  }

  private onStorageFailed(cause: unknown, lost: PipelineBatch[]): void {
    this.fail(cause, "storage.commit failed");
    for (const batch of lost) {
      batch.done?.reject(this.failure);
      for (const item of batch.items) this.rejectItem(item);
    }
  }

  private rejectItem(item: LineItem): void {
    const failure = this.failure as SessionFailed;
    if (item.prepared) this.itemOf.delete(item.prepared);
    for (const waiter of item.storedWaiters) waiter.reject(failure);
    item.storedWaiters = [];
    if (!item.published) {
      item.published = true;
      item.settle.reject(failure);
    }
  }

  /** Enters the failed state: every pending and later call rejects with `SessionFailed`. */
  private fail(cause: unknown, what: string): void {
    if (this.failure) return;
    this.failure = new SessionFailed(
      `the session failed (${what}: ${describe(cause)}); close it and reopen the storage`,
      {
        cause,
      },
    );
    this.clearDeferredTimer();
    this.pipeline.break(cause);
    const waiting = this.waiting;
    this.waiting = [];
    for (const request of waiting) {
      if (request.signal && request.onAbort)
        request.signal.removeEventListener("abort", request.onAbort);
      request.settle.reject(this.failure);
    }
    for (const item of this.publications) if (!item.stored) this.rejectItem(item);
    this.publications = this.publications.filter((item) => item.stored && !item.published);
    for (const layer of this.deferredLayers) {
      const item = this.itemOf.get(layer);
      if (item) this.rejectItem(item);
    }
    this.deferredLayers = [];
    this.drainPublications();
    this.failureListeners.notify(this.failure);
  }

  // ---- publication --------------------------------------------------------

  /** Publishes line items in line order: ordinary ones once stored, deferred and empty ones at once. */
  private drainPublications(): void {
    while (this.publications.length > 0) {
      const item = this.publications[0] as LineItem;
      if (item.published) {
        this.publications.shift();
        continue;
      }
      const ready = item.prepared === null ? !item.awaiting : item.deferred || item.stored;
      if (!ready) return;
      this.publications.shift();
      this.publish(item);
    }
  }

  private publish(item: LineItem): void {
    item.published = true;
    const layer = item.prepared;
    if (layer) {
      this.docs.markPublished(layer);
      for (const change of layer.docs)
        this.watches.notify(change.addressKey, change.state, change.ops);
      if (!item.deferred) this.runHooks(layer, item.seq);
    }
    item.settle.resolve(item.value);
  }

  private runHooks(layer: PreparedCommit, seq: Seq | undefined): void {
    for (const hook of layer.afterCommit) {
      try {
        hook({ seq });
      } catch (error) {
        this.onListenerError(error, "afterCommit hook");
      }
    }
  }

  // ---- deferred progress --------------------------------------------------

  private armDeferredTimer(): void {
    if (this.deferredTimer !== undefined) return;
    this.deferredTimer = setTimeout(() => {
      this.deferredTimer = undefined;
      void this.flushDeferred();
    }, this.persistWithinMs);
    this.deferredTimer.unref?.();
  }

  private clearDeferredTimer(): void {
    if (this.deferredTimer !== undefined) clearTimeout(this.deferredTimer);
    this.deferredTimer = undefined;
  }

  /**
   * Hands pending deferred commits to the flusher, coalesced; resolves once
   * they are stored. Several callers start a flush without awaiting it (the
   * timer, an ordinary commit, a seq lookup): the returned promise is marked
   * handled, so a failed storage call surfaces through the commits and the
   * failed state, never as an unhandled rejection; awaiting callers still
   * see the rejection.
   */
  private flushDeferred(): Promise<void> {
    this.clearDeferredTimer();
    if (this.deferredLayers.length === 0 || this.failure) return Promise.resolve();
    const layers = this.deferredLayers;
    this.deferredLayers = [];
    const waits: Promise<Seq>[] = [];
    for (const group of coalesce(layers)) {
      const done = withResolvers<Seq>();
      done.promise.catch(() => undefined); // observed through the commit promises / the failed state
      waits.push(done.promise);
      const items = group.layers.map((layer) => this.itemOf.get(layer) as LineItem);
      this.pipeline.enqueue({ writes: group.writes, items, deferred: true, done });
    }
    const stored = Promise.all(waits).then(() => undefined);
    stored.catch(() => undefined);
    return stored;
  }

  private deferredTouches(key: string): boolean {
    return this.deferredLayers.some((layer) =>
      layer.docs.some((change) => change.addressKey === key),
    );
  }

  private deferredHasTables(): boolean {
    return this.deferredLayers.some(
      (layer) =>
        layer.conversations.length +
          layer.entries.length +
          layer.tasks.length +
          layer.submissions.length >
        0,
    );
  }

  // ---- kernel services ----------------------------------------------------

  private throwIfFailed(): void {
    const failure = this.failure;
    if (failure) throw failure;
  }

  private checkUsable(): void {
    if (this.failure) throw this.failure;
    if (this.closed) throw new SessionClosed("the session is closed");
  }

  private async mintId(): Promise<number> {
    this.checkUsable();
    try {
      return await this.storage.mintId();
    } catch (error) {
      this.fail(error, "storage.mintId failed");
      throw this.failure as SessionFailed;
    }
  }

  private remember(record: ConversationRecord): void {
    if (this.known.size >= KNOWN_CONVERSATIONS)
      this.known.delete(this.known.keys().next().value as number);
    this.known.set(record.id, record);
  }

  private async entrySeq(id: EntryId): Promise<Seq | undefined> {
    const layer = this.overlay.entries.layerOf(id);
    const item = layer ? this.itemOf.get(layer) : undefined;
    if (item && !item.stored) {
      if (item.deferred) void this.flushDeferred();
      const waiter = withResolvers<Seq>();
      item.storedWaiters.push(waiter);
      return waiter.promise;
    }
    if (item?.seq !== undefined) return item.seq;
    return (await this.storage.entry(id))?.commitSeq;
  }

  /** Guard for reads outside the line: usable, and deferred table writes stored first. */
  private async beforeRead(): Promise<void> {
    this.checkUsable();
    if (this.deferredHasTables()) await this.flushDeferred();
    this.checkUsable();
  }

  // ---- documents ----------------------------------------------------------

  /** The value readers may see (stored, or published deferred progress), or `undefined`. Frozen. */
  snapshot<T extends DocValue, S extends DocScopeKind>(
    token: DocToken<T, S>,
    scopeId: unknown,
  ): Promise<T | undefined>;
  snapshot<T extends DocValue, S extends DocScopeKind, Seed>(
    token: DocFamilyToken<T, S, Seed>,
    scopeId: unknown,
    key: string,
  ): Promise<T | undefined>;
  async snapshot(
    token: AnyDocToken,
    scopeId: unknown,
    key?: string,
  ): Promise<DocValue | undefined> {
    this.checkUsable();
    const address = addressOf(token, scopeId, key);
    const k = addressKey(address);
    // Reading a document with unstored deferred progress stores that progress first.
    if (this.deferredTouches(k)) await this.flushDeferred();
    this.checkUsable();
    const state = await this.docs.published(this.docs.slot(k, address));
    return readAs(token, state);
  }

  /**
   * A rewindable conversation document's value as of the commit that wrote
   * `entryId` (`undefined` if it did not exist then).
   */
  async snapshotAsOf<T extends DocValue>(
    token: DocToken<T> | DocFamilyToken<T, DocScopeKind, never>,
    conversationId: ConversationId,
    entryId: EntryId,
    key?: string,
  ): Promise<T | undefined> {
    this.checkUsable();
    const t = token as AnyDocToken;
    if (t.scope !== "conversation" || t.history !== "rewindable")
      throw new TypeError(
        `snapshotAsOf: document "${t.kind}" must be a conversation document with history "rewindable"`,
      );
    const address = addressOf(t, conversationId, key);
    if (this.deferredHasTables()) await this.flushDeferred();
    const seq = await this.entrySeq(entryId);
    if (seq === undefined) throw new UnknownRecord(`entry ${entryId} does not exist`);
    const record = await this.storage.findDocument(address, seq);
    if (!record) return undefined;
    const doc = await this.storage.document(record.id, seq);
    if (!doc) return undefined;
    const state = incarnationFrom(doc);
    checkVersion(t, state);
    return readAs(t, state) as T;
  }

  /**
   * Calls `listener(value, ops)` after each published change of the
   * document (`undefined` once retired). Changes only: read the current value
   * with `snapshot`. Returns the disposer.
   */
  watchDoc<T extends DocValue, S extends DocScopeKind>(
    token: DocToken<T, S>,
    scopeId: unknown,
    listener: DocListener<T>,
  ): () => void;
  watchDoc<T extends DocValue, S extends DocScopeKind, Seed>(
    token: DocFamilyToken<T, S, Seed>,
    scopeId: unknown,
    key: string,
    listener: DocListener<T>,
  ): () => void;
  watchDoc(
    token: AnyDocToken,
    scopeId: unknown,
    keyOrListener: unknown,
    maybeListener?: unknown,
  ): () => void {
    this.checkUsable();
    const key = typeof keyOrListener === "string" ? keyOrListener : undefined;
    const listener = (
      typeof keyOrListener === "function" ? keyOrListener : maybeListener
    ) as DocListener<DocValue>;
    if (typeof listener !== "function")
      throw new TypeError("watchDoc: listener must be a function");
    const address = addressOf(token, scopeId, key);
    return this.watches.add(addressKey(address), {
      listener,
      view: (state, ops) => {
        if (state === null) return { value: undefined, ops };
        if (state.version === token.version) return { value: state.value, ops };
        const value = readAs(token, state);
        return { value, ops: [["r", value as DocValue]] };
      },
    });
  }

  /** Calls `listener({ seq, writes, deferred })` after each stored batch, in seq order. Returns the disposer. */
  subscribeCommits(listener: CommitListener): () => void {
    this.checkUsable();
    if (typeof listener !== "function")
      throw new TypeError("subscribeCommits: listener must be a function");
    return this.subscribers.add(listener);
  }

  // ---- close --------------------------------------------------------------

  /**
   * Stops admission (commits not yet admitted reject with `SessionClosed`),
   * lets admitted commits settle, stores deferred progress, then closes the
   * storage. Idempotent; also the way out of a failed session.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    const waiting = this.waiting;
    this.waiting = [];
    for (const request of waiting) {
      if (request.signal && request.onAbort)
        request.signal.removeEventListener("abort", request.onAbort);
      request.settle.reject(
        new SessionClosed("the session was closed before this commit was admitted"),
      );
    }
    await this.whenLineIdle();
    await this.flushDeferred().catch(() => undefined);
    await this.pipeline.whenIdle();
    this.clearDeferredTimer();
    this.closed = true;
    this.watches.clear();
    this.subscribers.clear();
    this.failureListeners.clear();
    await this.storage.close();
  }
}
