import {
  NestedCommit,
  SessionClosed,
  type SessionFailed,
  UnknownRecord,
} from "../domain/errors.js";
import { ROOT_CONVERSATION_ID, type ConversationId, type EntryId } from "../domain/ids.js";
import type { CallOptions, Storage } from "../storage/port.js";
import { commitItem } from "./commit-item.js";
import { CommitLine } from "./commit-line.js";
import { incarnationFrom } from "./doc-cache.js";
import { checkVersion, readAs } from "./doc-versions.js";
import type { FailureListener } from "./failure-listeners.js";
import type { GroupCommitStats } from "./group-commit.js";
import { SessionReader } from "./reader.js";
import { releaseStorage, takeStorage } from "./storage-owners.js";
import {
  addressKey,
  addressOf,
  type AnyDocToken,
  type DocFamilyToken,
  type DocScopeKind,
  type DocToken,
  type DocValue,
} from "./tokens.js";
import type { Transaction } from "./transaction.js";
import { valueLimits, type LimitOptions } from "./value-size.js";
import {
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
  /**
   * Lower size limits, in bytes of JSON text (tests, or a deployment that
   * wants smaller values). `valueBytes` defaults to and may not exceed
   * `MAX_VALUE_BYTES`, `commitBytes` to and may not exceed `MAX_COMMIT_BYTES`
   * (or twice `valueBytes`, whichever is smaller): a larger limit could let
   * through a value some backend cannot store.
   */
  limits?: LimitOptions;
}

export interface CommitOptions extends CallOptions {
  /** "deferred": applied and published at once, stored later, coalesced (progress output). */
  durability?: "deferred";
}

const DEFAULT_PERSIST_WITHIN_MS = 1000;

/**
 * The Session: the commit line with group commit, read-your-writes across
 * the pipeline, documents, watches, deferred progress, and the failure
 * rules (docs/architecture.md, section 7: a failed storage call fails the
 * session; a failed callback or write fails only its commit).
 */
export class Session {
  /** The session clock (ms since the epoch). */
  readonly clock: () => number;
  /** Reads of stored state outside a commit (deferred table writes are stored first). */
  readonly read: SessionReader;

  private readonly line: CommitLine;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly storage: Storage,
    options: SessionOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    const persistWithinMs =
      options.settings?.progress?.persistWithinMs ?? DEFAULT_PERSIST_WITHIN_MS;
    if (!(persistWithinMs >= 0 && Number.isFinite(persistWithinMs)))
      throw new TypeError(
        `settings.progress.persistWithinMs must be a non-negative number, got ${String(persistWithinMs)}`,
      );
    this.line = new CommitLine(
      storage,
      options.onListenerError ?? reportToConsole,
      persistWithinMs,
      options.documentCacheSize ?? 4096,
      valueLimits(options.limits),
    );
    this.read = new SessionReader(storage, () => this.beforeRead());
  }

  /**
   * Opens a session over a storage it then owns (`close()` closes it). A new
   * storage gets the root conversation (id 1) as its first commit.
   */
  static async open(storage: Storage, options: SessionOptions = {}): Promise<Session> {
    options.signal?.throwIfAborted();
    takeStorage(storage);
    try {
      const session = new Session(storage, options);
      const root = await storage.conversation(ROOT_CONVERSATION_ID, options);
      if (root) session.line.remember(root);
      else
        await session.line.enqueueGroup(
          [{ type: "conversation", value: Object.freeze({ id: ROOT_CONVERSATION_ID }) }],
          [],
          false,
        );
      return session;
    } catch (error) {
      // Not opened: the caller still holds the storage, and may close it or open it again.
      releaseStorage(storage);
      throw error;
    }
  }

  /** Counters of the group-commit flusher: storage calls and the batches they carried. */
  get commitStats(): Readonly<GroupCommitStats> {
    return this.line.stats;
  }

  /** The error the session failed with, if it did. */
  get failed(): SessionFailed | undefined {
    return this.line.failed;
  }

  /**
   * Calls `listener(failure)` once when the session fails (on a microtask
   * when it has failed already): waits that only stored commits could end
   * reject with it instead of waiting forever. Returns the disposer.
   */
  onFailure(listener: FailureListener): () => void {
    if (typeof listener !== "function")
      throw new TypeError("onFailure: listener must be a function");
    return this.line.failureListeners.add(listener);
  }

  // ---- commits ------------------------------------------------------------

  /**
   * Runs `callback` on the commit line and stores what it wrote as one batch
   * (all or nothing). Resolves with the callback's value once the batch is
   * stored and published; a deferred commit resolves once published.
   */
  commit<T>(callback: (tx: Transaction) => T | Promise<T>, options?: CommitOptions): Promise<T> {
    const failure = this.line.failed;
    if (failure) return Promise.reject(failure);
    if (this.closing || this.line.closed)
      return Promise.reject(new SessionClosed("the session is closed"));
    const durability = options?.durability;
    // Deferred progress is exempt: output writers (a tool's api.output) commit from anywhere, never awaiting the line.
    if (this.line.inCallback && durability !== "deferred")
      return Promise.reject(
        new NestedCommit(
          "session.commit was called inside a commit callback: it would wait for the callback and the callback for it; write through the callback's tx instead",
        ),
      );
    if (typeof callback !== "function")
      return Promise.reject(new TypeError("commit: callback must be a function"));
    if (durability !== undefined && durability !== "deferred")
      return Promise.reject(new TypeError(`commit: durability must be "deferred" or absent`));
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    const item = commitItem(callback, durability === "deferred", signal);
    this.line.submit(item);
    return item.promise as Promise<T>;
  }

  /** Guard for reads outside the line: usable, and deferred table writes stored first. */
  private async beforeRead(): Promise<void> {
    this.line.checkUsable();
    if (this.line.deferred.hasTables()) await this.line.deferred.flush();
    this.line.checkUsable();
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
    this.line.checkUsable();
    const address = addressOf(token, scopeId, key);
    const k = addressKey(address);
    // Reading a document with unstored deferred progress stores that progress first.
    if (this.line.deferred.touches(k)) await this.line.deferred.flush();
    this.line.checkUsable();
    const state = await this.line.docs.published(this.line.docs.slot(k, address));
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
    this.line.checkUsable();
    const t = token as AnyDocToken;
    if (t.scope !== "conversation" || t.history !== "rewindable")
      throw new TypeError(
        `snapshotAsOf: document "${t.kind}" must be a conversation document with history "rewindable"`,
      );
    const address = addressOf(t, conversationId, key);
    if (this.line.deferred.hasTables()) await this.line.deferred.flush();
    const seq = await this.line.entrySeq(entryId);
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
    this.line.checkUsable();
    const key = typeof keyOrListener === "string" ? keyOrListener : undefined;
    const listener = (
      typeof keyOrListener === "function" ? keyOrListener : maybeListener
    ) as DocListener<DocValue>;
    if (typeof listener !== "function")
      throw new TypeError("watchDoc: listener must be a function");
    const address = addressOf(token, scopeId, key);
    return this.line.watches.add(addressKey(address), {
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
    this.line.checkUsable();
    if (typeof listener !== "function")
      throw new TypeError("subscribeCommits: listener must be a function");
    return this.line.subscribers.add(listener);
  }

  // ---- close --------------------------------------------------------------

  /**
   * Stops admission (commits not yet admitted reject with `SessionClosed`),
   * lets admitted commits settle, stores deferred progress, then closes the
   * storage. Idempotent; also the way out of a failed session.
   */
  close(): Promise<void> {
    // Close waits for the running callback; awaited inside it, neither would ever end.
    if (this.line.inCallback && this.closing === undefined)
      return Promise.reject(
        new NestedCommit(
          "session.close was called inside a commit callback: it would wait for the callback and the callback for it; close once the commit has settled",
        ),
      );
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    const line = this.line;
    line.rejectWaiting(
      () => new SessionClosed("the session was closed before this commit was admitted"),
    );
    await line.whenLineIdle();
    await line.deferred.flush().catch(() => undefined);
    await line.whenStored();
    line.deferred.clearTimer();
    line.closed = true;
    line.watches.clear();
    line.subscribers.clear();
    line.failureListeners.clear();
    try {
      await this.storage.close();
    } finally {
      releaseStorage(this.storage);
    }
  }
}
