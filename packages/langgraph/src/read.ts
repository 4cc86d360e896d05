import { setOwn, type Session } from "@durably/core";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  TASKS,
  maxChannelVersion,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { findEntry, latest, newestFirst } from "./checkpoint-index.js";
import { beforeIdOf, listTarget, readTarget, tupleConfig, type ThreadAddress } from "./config.js";
import { tailKey, type SaverContext } from "./context.js";
import {
  ChannelDoc,
  WritesDoc,
  asConversation,
  asEntry,
  type ChannelState,
  type ChannelValue,
} from "./documents.js";
import { sameVersion, type CheckpointEntry } from "./entry-format.js";
import { CheckpointDataCorrupted } from "./errors.js";
import { allThreads, conversationOf, indexOf, namespacesOf } from "./namespaces.js";
import { ownValue } from "./own-keys.js";
import { decodeChannelValue, decodeTyped } from "./typed-value.js";

/** A checkpoint found in a namespace index. */
interface Located {
  address: ThreadAddress;
  conversationId: number;
  checkpointId: string;
  entryId: number;
}

/** `getTuple`: the named checkpoint, or the namespace's newest (greatest id). */
export async function getCheckpointTuple(
  ctx: SaverContext,
  config: RunnableConfig,
): Promise<CheckpointTuple | undefined> {
  const target = readTarget(config);
  if (!target) return undefined;
  const session = await ctx.session();
  const conversationId = await conversationOf(session, target);
  if (conversationId === undefined) return undefined;
  const index = await indexOf(session, conversationId);
  const pages = index?.checkpoints ?? [];
  let checkpointId: string | undefined;
  let entryId: number | undefined;
  if (target.checkpointId !== undefined) {
    checkpointId = target.checkpointId;
    entryId = findEntry(pages, checkpointId);
  } else {
    const newest = latest(pages);
    if (newest) [checkpointId, entryId] = newest;
  }
  if (checkpointId === undefined || entryId === undefined) return undefined;
  return tupleOf(ctx, session, { address: target, conversationId, checkpointId, entryId }, true);
}

/** `list`: checkpoints newest first (greatest id first, across threads and namespaces too). */
export async function* listCheckpointTuples(
  ctx: SaverContext,
  config: RunnableConfig,
  options: CheckpointListOptions = {},
): AsyncGenerator<CheckpointTuple> {
  const target = listTarget(config);
  const beforeId = beforeIdOf(options.before);
  const filter = Object.entries(options.filter ?? {}).filter(([, v]) => v !== undefined);
  let remaining = options.limit;
  const session = await ctx.session();

  const found: Located[] = [];
  const threads = target.threadId !== undefined ? [target.threadId] : allThreads(session);
  for await (const threadId of threads) {
    for (const { ns, conversationId } of await namespacesOf(session, threadId)) {
      if (target.ns !== undefined && ns !== target.ns) continue;
      const index = await indexOf(session, conversationId);
      for (const [checkpointId, entryId] of newestFirst(index?.checkpoints ?? [])) {
        if (target.checkpointId !== undefined && checkpointId !== target.checkpointId) continue;
        if (beforeId !== undefined && !(checkpointId < beforeId)) continue;
        found.push({ address: { threadId, ns }, conversationId, checkpointId, entryId });
      }
    }
  }
  found.sort((a, b) =>
    a.checkpointId < b.checkpointId ? 1 : a.checkpointId > b.checkpointId ? -1 : 0,
  );

  for (const located of found) {
    if (remaining !== undefined && remaining <= 0) return;
    const entry = await ctx.entry(session, located.entryId, where(located));
    if (filter.length > 0) {
      const metadata = (await decodeTyped(
        ctx.serde,
        entry.data.metadata,
        `${where(located)} metadata`,
      )) as Record<string, unknown> | undefined;
      if (!filter.every(([key, value]) => sameValue(metadata && ownValue(metadata, key), value)))
        continue;
    }
    yield await tupleOf(ctx, session, located, false, entry);
    if (remaining !== undefined) remaining--;
  }
}

function where(located: Located): string {
  return `thread ${JSON.stringify(located.address.threadId)} namespace ${JSON.stringify(located.address.ns)} checkpoint ${located.checkpointId} (conversation ${located.conversationId}, entry ${located.entryId})`;
}

/** Metadata filters match values structurally (LangGraph's SQL savers compare JSON). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ak = Object.keys(a);
  const bk = Object.keys(b);
  if (ak.length !== bk.length) return false;
  return ak.every(
    (k) =>
      Object.prototype.hasOwnProperty.call(b, k) &&
      sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/**
 * Builds a tuple. With `resumes` (getTuple: LangGraph resumes a thread from
 * it), the arrays read from channel documents that are still current are
 * remembered, so the next put of the resumed run appends to them (their items
 * are what is stored) instead of comparing the whole list.
 */
async function tupleOf(
  ctx: SaverContext,
  session: Session,
  located: Located,
  resumes: boolean,
  known?: CheckpointEntry,
): Promise<CheckpointTuple> {
  const at = where(located);
  const entry = known ?? (await ctx.entry(session, located.entryId, at));
  const { data } = entry;
  if (entry.conversationId !== located.conversationId || data.id !== located.checkpointId)
    throw new CheckpointDataCorrupted(
      `${at}: the entry holds checkpoint ${data.id} of conversation ${entry.conversationId}`,
    );
  const skeleton = (await decodeTyped(ctx.serde, data.checkpoint, `${at} checkpoint`)) as Omit<
    Checkpoint,
    "channel_values" | "channel_versions"
  >;
  const metadata = (await decodeTyped(
    ctx.serde,
    data.metadata,
    `${at} metadata`,
  )) as CheckpointMetadata;
  const channel_values: Record<string, unknown> = {};
  for (const [channel, version] of Object.entries(data.versions)) {
    const value = await channelValue(ctx, session, entry, channel, version, at);
    if (!value.found) continue;
    setOwn(channel_values, channel, value.value);
    if (resumes && ctx.trustItems && value.currentDoc !== undefined && Array.isArray(value.value))
      ctx.tails.set(tailKey(located.address.threadId, located.address.ns, channel), {
        // A copy: the caller may grow the array it was handed in place (see planChannel).
        raw: (value.value as unknown[]).slice(),
        entry: value.currentDoc,
      });
  }
  const checkpoint: Checkpoint = {
    ...skeleton,
    channel_values,
    channel_versions: { ...data.versions },
  };
  const conv = asConversation(located.conversationId);
  const writes = await session.snapshot(WritesDoc, conv, located.checkpointId);
  const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
    (writes?.writes ?? []).map(async (w): Promise<CheckpointPendingWrite> => [
      w.task,
      w.channel,
      await decodeTyped(ctx.serde, w.value, `${at} pending write ${w.task}/${w.idx}`),
    ]),
  );
  if (checkpoint.v < 4 && data.parent !== undefined)
    await migratePendingSends(ctx, session, checkpoint, conv, data.parent, at);
  return {
    config: tupleConfig(located.address, located.checkpointId),
    checkpoint,
    metadata,
    pendingWrites,
    ...(data.parent !== undefined
      ? { parentConfig: tupleConfig(located.address, data.parent) }
      : {}),
  };
}

/** A channel's value as the checkpoint saw it: stored here, carried from an earlier entry, or none. */
async function channelValue(
  ctx: SaverContext,
  session: Session,
  entry: CheckpointEntry,
  channel: string,
  version: string | number,
  at: string,
): Promise<{ found: false } | { found: true; value: unknown; currentDoc?: number }> {
  const own = ownValue(entry.data.stored, channel);
  let home: CheckpointEntry | undefined;
  if (own !== undefined && sameVersion(own.version, version)) home = entry;
  else {
    const carriedFrom = ownValue(entry.data.carried, channel);
    if (carriedFrom === undefined) return { found: false };
    home = await ctx.entry(session, carriedFrom, `${at} channel ${JSON.stringify(channel)}`);
  }
  const stored = ownValue(home.data.stored, channel);
  const field = `${at} channel ${JSON.stringify(channel)} (from entry ${home.entryId})`;
  if (
    stored === undefined ||
    !sameVersion(stored.version, version) ||
    home.conversationId !== entry.conversationId
  )
    throw new CheckpointDataCorrupted(`${field}: that entry did not store version ${version}`);
  if ("value" in stored)
    return { found: true, value: await decodeTyped(ctx.serde, stored.value, field) };
  if (!("doc" in stored)) return { found: false };
  const doc = await docValueAt(session, home.conversationId, channel, home.entryId, field);
  return {
    found: true,
    value: await decodeChannelValue(ctx.serde, doc.value, field),
    ...(doc.current ? { currentDoc: home.entryId } : {}),
  };
}

/** The channel document's value written by `entryId`'s commit: the current value if it is that one. */
async function docValueAt(
  session: Session,
  conversationId: number,
  channel: string,
  entryId: number,
  field: string,
): Promise<{ value: ChannelValue; current: boolean }> {
  const conv = asConversation(conversationId);
  const current = await session.snapshot(ChannelDoc, conv, channel);
  let state: ChannelState | undefined = current;
  if (current?.entry !== entryId)
    state = await session.snapshotAsOf(ChannelDoc, conv, asEntry(entryId), channel);
  if (state?.entry !== entryId || state.value === null)
    throw new CheckpointDataCorrupted(
      `${field}: the channel document as of entry ${entryId} holds ${state ? `entry ${state.entry}'s value` : "nothing"}`,
    );
  return { value: state.value, current: state === current };
}

/**
 * Checkpoints older than format 4 kept sends in the parent's `__pregel_tasks`
 * writes; LangGraph's savers move them into the channel on read. So does this one.
 */
async function migratePendingSends(
  ctx: SaverContext,
  session: Session,
  checkpoint: Checkpoint,
  conv: ReturnType<typeof asConversation>,
  parentId: string,
  at: string,
): Promise<void> {
  const parentWrites = await session.snapshot(WritesDoc, conv, parentId);
  const sends = await Promise.all(
    (parentWrites?.writes ?? [])
      .filter((w) => w.channel === TASKS)
      .map((w) => decodeTyped(ctx.serde, w.value, `${at} parent send ${w.task}/${w.idx}`)),
  );
  const versions = Object.values(checkpoint.channel_versions);
  checkpoint.channel_values[TASKS] = sends;
  checkpoint.channel_versions[TASKS] =
    versions.length > 0 ? maxChannelVersion(...versions) : ctx.firstVersion();
}
