import type { Session, Storage } from "@durably/core";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { threadIdOf } from "./config.js";
import { SaverContext } from "./context.js";
import { ThreadDoc } from "./documents.js";
import { retireThread } from "./namespaces.js";
import { putCheckpoint } from "./put.js";
import { getCheckpointTuple, listCheckpointTuples } from "./read.js";
import { putCheckpointWrites } from "./writes.js";

export interface DurablyCheckpointSaverOptions {
  /** LangGraph's serializer (default: its `JsonPlusSerializer`). */
  serde?: SerializerProtocol;
  /**
   * How `put` finds what a growing array channel (the messages list) added
   * since the previous checkpoint:
   * - `"identity"` (default): items that are the very same objects as in the
   *   array this saver stored last are taken as stored; only the rest is
   *   serialized. A step then costs the same however long the conversation.
   *   Assumes stored items are not mutated in place (LangGraph's reducers
   *   never do; see README).
   * - `"content"`: serialize the whole value every time and compare it with
   *   the stored one item by item; the stored delta is the same, the CPU cost
   *   grows with the value.
   */
  deltas?: "identity" | "content";
}

/**
 * LangGraph's checkpointer over any Durably storage (SQLite, JSONL,
 * PostgreSQL, LevelDB or IndexedDB through the store adapter, memory):
 * `put`, `putWrites` and `deleteThread` are each one atomic Durably commit,
 * and a growing channel (the messages list) is stored as deltas.
 *
 * Pass a `Storage` (the saver opens a Session over it on first use and
 * `close()` closes both) or an open `Session` (shared with the application;
 * `close()` leaves it open).
 */
export class DurablyCheckpointSaver extends BaseCheckpointSaver {
  private readonly ctx: SaverContext;

  constructor(storage: Storage | Session, options: DurablyCheckpointSaverOptions = {}) {
    super(options.serde);
    const deltas = options.deltas ?? "identity";
    if (deltas !== "identity" && deltas !== "content")
      throw new TypeError(
        `DurablyCheckpointSaver: deltas must be "identity" or "content", got ${String(deltas)}`,
      );
    this.ctx = new SaverContext(storage, this.serde, deltas === "identity", () =>
      this.getNextVersion(undefined),
    );
  }

  /** The Durably session the saver works through (opened now if it was given a storage). */
  session(): Promise<Session> {
    return this.ctx.session();
  }

  override getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return getCheckpointTuple(this.ctx, config);
  }

  override list(
    config: RunnableConfig,
    options?: CheckpointListOptions,
  ): AsyncGenerator<CheckpointTuple> {
    return listCheckpointTuples(this.ctx, config, options);
  }

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return putCheckpoint(this.ctx, config, checkpoint, metadata, newVersions);
  }

  override putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    return putCheckpointWrites(this.ctx, config, writes, taskId, taskPath);
  }

  override async deleteThread(threadId: string): Promise<void> {
    const id = threadIdOf(threadId, "deleteThread");
    const session = await this.ctx.session();
    if ((await session.snapshot(ThreadDoc, null, id)) === undefined) return;
    await session.commit((tx) => retireThread(tx, id));
  }

  /**
   * Closes the session the saver opened and so its storage; a storage the
   * saver never opened a session over is closed directly. A session passed
   * in stays open. Idempotent; later calls reject with `SessionClosed`.
   */
  close(): Promise<void> {
    return this.ctx.close();
  }
}
