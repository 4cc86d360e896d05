import { setOwn, type Cursor, type Json, type Session, type Transaction } from "@durably/core";
import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
} from "@langchain/langgraph-checkpoint";
import { planChannel, storedOf, writeChannel, type ChannelPlan } from "./channel-plan.js";
import { findEntry, insertEntry } from "./checkpoint-index.js";
import { putTarget, tupleConfig } from "./config.js";
import { tailKey, type SaverContext } from "./context.js";
import { IndexDoc, ThreadDoc, asConversation, type IndexItem } from "./documents.js";
import {
  CHECKPOINT_ENTRY,
  checkpointEntryOf,
  sameVersion,
  type CheckpointEntry,
  type CheckpointEntryData,
  type StoredChannel,
  type Version,
} from "./entry-format.js";
import { entryTooLarge } from "./entry-size.js";
import { CheckpointConfigError, CheckpointValueError } from "./errors.js";
import { ensureNamespace } from "./namespaces.js";
import { ownValue } from "./own-keys.js";
import { encodeTyped } from "./typed-value.js";

const SCAN_PAGE = 64;

function versionsOf(value: unknown, where: string): Record<string, Version> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw new CheckpointValueError(`${where} must be an object of channel versions`);
  const out: Record<string, Version> = {};
  for (const [channel, version] of Object.entries(value as Record<string, unknown>)) {
    if (typeof version !== "string" && !(typeof version === "number" && Number.isFinite(version)))
      throw new CheckpointValueError(
        `${where}[${JSON.stringify(channel)}]: a channel version must be a string or a finite number, got ${String(version)}`,
      );
    setOwn(out, channel, version);
  }
  return out;
}

/**
 * `put`: one commit stores the checkpoint entry, the changed channels (inline
 * or as deltas of their documents) and the namespace index, or none of it.
 * Only channels named in `newVersions` are stored; the others are carried
 * over from the checkpoint that stored their current version (LangGraph's
 * rule, checked by its validation suite).
 */
export async function putCheckpoint(
  ctx: SaverContext,
  config: RunnableConfig,
  checkpoint: Checkpoint,
  metadata: CheckpointMetadata,
  newVersions: ChannelVersions,
): Promise<RunnableConfig> {
  const target = putTarget(config);
  if (typeof checkpoint?.id !== "string" || checkpoint.id === "")
    throw new CheckpointConfigError("put: checkpoint.id must be a non-empty string");
  const { channel_values, channel_versions, ...rest } = checkpoint;
  const values: Record<string, unknown> = channel_values ?? {};
  const versions = versionsOf(channel_versions, "put: checkpoint.channel_versions");
  const changed = versionsOf(newVersions, "put: newVersions");

  const [skeleton, meta, plans] = await Promise.all([
    encodeTyped(ctx.serde, rest),
    encodeTyped(ctx.serde, metadata),
    Promise.all(
      Object.entries(changed).map(([channel, version]) =>
        planChannel(ctx, target, channel, version, values),
      ),
    ),
  ]);
  const stored: Record<string, StoredChannel> = {};
  for (const plan of plans) setOwn(stored, plan.channel, storedOf(plan));

  const session = await ctx.session();
  const done = await session.commit(async (tx) => {
    const thread = await tx.doc(ThreadDoc, null, target.threadId, undefined);
    const existing = ownValue(thread.namespaces, target.ns);
    const carried: Record<string, number> = {};
    let sorted: readonly (readonly IndexItem[])[] = [];
    if (existing !== undefined) {
      sorted = await sortedCheckpoints(session, tx, existing);
      await resolveCarried(ctx, tx, existing, sorted, target.parentId, versions, changed, carried);
    }
    // Table writes from here on (the reads above must come first).
    const conversationId = await ensureNamespace(tx, thread, target);
    const data: CheckpointEntryData = {
      id: checkpoint.id,
      ...(target.parentId !== undefined ? { parent: target.parentId } : {}),
      checkpoint: skeleton,
      metadata: meta,
      versions,
      stored,
      carried,
    };
    const entry = await tx
      .appendEntry(asConversation(conversationId), {
        kind: CHECKPOINT_ENTRY,
        data: data as unknown as Json,
      })
      .catch((error: unknown) => {
        throw entryTooLarge(error, target, data) ?? error;
      });
    const index = await tx.doc(IndexDoc, asConversation(conversationId));
    for (const plan of plans) {
      if (plan.kind !== "doc" && plan.kind !== "append") continue;
      await writeChannel(ctx, session, tx, conversationId, plan, entry.id);
      if (!index.channels.includes(plan.channel)) index.channels.push(plan.channel);
    }
    insertEntry(index.checkpoints, sorted, checkpoint.id, entry.id);
    index.last = entry.id;
    return {
      conversationId,
      entryId: entry.id,
      data: entry.data as unknown as CheckpointEntryData,
    };
  });

  ctx.remember({ entryId: done.entryId, conversationId: done.conversationId, data: done.data });
  rememberTails(ctx, target, plans, done.entryId);
  return tupleConfig(target, checkpoint.id);
}

/**
 * The namespace's sorted checkpoints as the commit sees them, read-only: the
 * published value when the draft starts from it (the usual case), else the
 * draft's own (which copies each element it reads).
 */
async function sortedCheckpoints(
  session: Session,
  tx: Transaction,
  conversationId: number,
): Promise<readonly (readonly IndexItem[])[]> {
  const conv = asConversation(conversationId);
  const draft = await tx.doc(IndexDoc, conv);
  const published = await session.snapshot(IndexDoc, conv);
  if (published !== undefined && published.last === draft.last) return published.checkpoints;
  return draft.checkpoints.map((page) => page.map((item) => [item[0], item[1]] as IndexItem));
}

/** After the commit: the arrays now in channel documents, for the next put's fast path. */
function rememberTails(
  ctx: SaverContext,
  target: { threadId: string; ns: string },
  plans: readonly ChannelPlan[],
  entry: number,
): void {
  for (const plan of plans) {
    const key = tailKey(target.threadId, target.ns, plan.channel);
    if ((plan.kind === "doc" || plan.kind === "append") && Array.isArray(plan.raw))
      ctx.tails.set(key, { raw: plan.raw as readonly unknown[], entry });
    else ctx.tails.delete(key);
  }
}

/**
 * Finds where each unchanged channel's value lives: normally the parent
 * checkpoint stored it or carried it at the same version; otherwise (a put
 * whose parent is not the checkpoint it derives from) the newest checkpoint
 * of the namespace that stored that channel at that version.
 */
async function resolveCarried(
  ctx: SaverContext,
  tx: Transaction,
  conversationId: number,
  sorted: readonly (readonly IndexItem[])[],
  parentId: string | undefined,
  versions: Record<string, Version>,
  changed: Record<string, Version>,
  carried: Record<string, number>,
): Promise<void> {
  const unchanged = Object.keys(versions).filter(
    (c) => !Object.prototype.hasOwnProperty.call(changed, c),
  );
  if (unchanged.length === 0) return;
  const parentEntry = parentId !== undefined ? findEntry(sorted, parentId) : undefined;
  const parent =
    parentEntry !== undefined
      ? await ctx.entryIn(tx, parentEntry, `put: parent checkpoint ${parentId}`)
      : undefined;
  const missing: string[] = [];
  for (const channel of unchanged) {
    const version = versions[channel];
    if (parent && sameVersion(ownValue(parent.data.versions, channel), version)) {
      const home = homeIn(parent, channel, version as Version);
      if (home !== undefined) setOwn(carried, channel, home);
    } else missing.push(channel);
  }
  if (missing.length > 0) await searchStored(tx, conversationId, missing, versions, carried);
}

/** Where `entry` found `channel`'s value at `version`: itself, an earlier entry, or nowhere (no value). */
function homeIn(entry: CheckpointEntry, channel: string, version: Version): number | undefined {
  const own = ownValue(entry.data.stored, channel);
  if (own !== undefined && sameVersion(own.version, version))
    return "value" in own || "doc" in own ? entry.entryId : undefined;
  return ownValue(entry.data.carried, channel);
}

async function searchStored(
  tx: Transaction,
  conversationId: number,
  channels: string[],
  versions: Record<string, Version>,
  carried: Record<string, number>,
): Promise<void> {
  const open = new Set(channels);
  let cursor: Cursor | undefined;
  do {
    const page = await tx.scanEntries(
      { conversationId: asConversation(conversationId), order: "descending" },
      SCAN_PAGE,
      cursor,
    );
    for (const record of page.items) {
      const entry = checkpointEntryOf(record);
      for (const channel of open) {
        const own = ownValue(entry.data.stored, channel);
        if (own === undefined || !sameVersion(own.version, versions[channel])) continue;
        if ("value" in own || "doc" in own) setOwn(carried, channel, entry.entryId);
        open.delete(channel);
      }
      if (open.size === 0) return;
    }
    cursor = page.next;
  } while (cursor !== undefined);
}
