import {
  Session,
  SessionClosed,
  type EntryId,
  type Storage,
  type Transaction,
} from "@durably/core";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { checkpointEntryOf, type CheckpointEntry } from "./entry-format.js";
import { CheckpointDataCorrupted } from "./errors.js";
import { Lru } from "./lru.js";

/** A copy of the last array a channel stored through this saver, and the entry that stored it. */
export interface StoredTail {
  raw: readonly unknown[];
  entry: number;
}

/**
 * What the saver's operations share: the session (opened lazily over a
 * storage, or given), the serializer, and two caches that are safe by
 * construction: checkpoint entries are immutable (cached by entry id), and a
 * channel's last stored array is only used after the commit checks that the
 * channel document still holds what that entry wrote.
 */
export class SaverContext {
  private opened: Promise<Session> | undefined;
  /** Set by close() when no session was opened: the storage is closed, none will be. */
  private closedUnopened: Promise<void> | undefined;
  private readonly entries = new Lru<number, CheckpointEntry>(2048);
  readonly tails = new Lru<string, StoredTail>(1024);

  constructor(
    private readonly source: Storage | Session,
    readonly serde: SerializerProtocol,
    /** Whether array items kept by identity may be taken as already stored (see README: deltas). */
    readonly trustItems: boolean,
    /** The saver's `getNextVersion(undefined)`: the version a new channel gets. */
    readonly firstVersion: () => string | number,
  ) {}

  session(): Promise<Session> {
    if (this.opened === undefined && this.closedUnopened !== undefined)
      return Promise.reject(new SessionClosed("the checkpoint saver is closed"));
    this.opened ??=
      this.source instanceof Session ? Promise.resolve(this.source) : Session.open(this.source);
    return this.opened;
  }

  /**
   * Closes the session the saver opened, or, when it never opened one, the
   * storage it was given (close() must not open a session just to close it);
   * a session passed in stays open. Idempotent.
   */
  async close(): Promise<void> {
    if (this.source instanceof Session) return;
    if (this.opened !== undefined) return (await this.opened).close();
    this.closedUnopened ??= this.source.close();
    return this.closedUnopened;
  }

  remember(entry: CheckpointEntry): void {
    this.entries.set(entry.entryId, entry);
  }

  /** A checkpoint entry through a transaction (a table read: call before the commit's first table write). */
  async entryIn(tx: Transaction, entryId: number, why: string): Promise<CheckpointEntry> {
    const cached = this.entries.get(entryId);
    if (cached) return cached;
    const record = await tx.entry(entryId as EntryId);
    if (!record) throw new CheckpointDataCorrupted(`${why}: entry ${entryId} does not exist`);
    const entry = checkpointEntryOf(record);
    this.entries.set(entryId, entry);
    return entry;
  }

  /** A checkpoint entry outside a commit. */
  async entry(session: Session, entryId: number, why: string): Promise<CheckpointEntry> {
    const cached = this.entries.get(entryId);
    if (cached) return cached;
    const found = await session.read.entry(entryId as EntryId);
    if (!found) throw new CheckpointDataCorrupted(`${why}: entry ${entryId} does not exist`);
    const entry = checkpointEntryOf(found.entry);
    this.entries.set(entryId, entry);
    return entry;
  }
}

export const tailKey = (threadId: string, ns: string, channel: string): string =>
  `${threadId}\u0000${ns}\u0000${channel}`;
