import {
  defineDoc,
  defineDocFamily,
  type ConversationId,
  type EntryId,
  type Json,
} from "@durably/core";
import type { Typed } from "./typed-value.js";

/*
 * What the saver keeps in Durably documents. Entries (one per checkpoint) are
 * immutable; these documents are the mutable parts: which conversation holds
 * a thread's namespace, the ordered checkpoint ids of a namespace, each
 * growing channel's value (stored as deltas), and each checkpoint's pending
 * writes. Every `put`, `putWrites` and `deleteThread` changes them together
 * with its entry in one commit.
 */

/** A base (whole value) once the deltas since the last base outnumber the value's own units. */
function geometricBase(units: number, deltasSinceBase: number): boolean {
  return deltasSinceBase + 1 >= Math.max(16, units);
}

/** Session scope, one per storage: the conversation that lists every thread ever written. */
export interface SaverState {
  [key: string]: Json;
  registry: number;
}
export const SaverDoc = defineDoc<SaverState, "session">({
  kind: "langgraph.saver",
  version: 1,
  scope: "session",
  initial: () => ({ registry: 0 }),
});

/** Session scope, keyed by thread id: the conversation of each checkpoint namespace of the thread. */
export interface ThreadState {
  [key: string]: Json;
  namespaces: { [ns: string]: number };
}
export const ThreadDoc = defineDocFamily<ThreadState, "session">({
  kind: "langgraph.thread",
  version: 1,
  scope: "session",
  initial: () => ({ namespaces: {} }),
});

/** One checkpoint of a namespace: its id and the entry that holds it. */
export type IndexItem = [checkpointId: string, entryId: number];

/** Conversation scope: the namespace's checkpoints sorted by id, and the channels kept in documents. */
export interface IndexState {
  [key: string]: Json;
  thread: string;
  ns: string;
  checkpoints: IndexItem[];
  channels: string[];
}
export const IndexDoc = defineDoc<IndexState, "conversation">({
  kind: "langgraph.checkpoints",
  version: 1,
  scope: "conversation",
  initial: () => ({ thread: "", ns: "", checkpoints: [], channels: [] }),
  checkpointWhen: (value, _ops, { deltasSinceBase }) =>
    geometricBase(value.checkpoints.length, deltasSinceBase),
});

/**
 * Conversation scope, keyed by channel name, every revision kept: a channel
 * whose serialized value is an array or a string. `entry` is the checkpoint
 * entry whose commit wrote this value, so the value a checkpoint saw is the
 * document as of that entry (`snapshotAsOf`).
 */
export interface ChannelState {
  [key: string]: Json;
  entry: number;
  value: Typed | null;
}
export const ChannelDoc = defineDocFamily<ChannelState, "conversation">({
  kind: "langgraph.channel",
  version: 1,
  scope: "conversation",
  history: "rewindable",
  initial: () => ({ entry: 0, value: null }),
  checkpointWhen: (value, _ops, { deltasSinceBase }) =>
    geometricBase(unitsOf(value.value), deltasSinceBase),
});

/** Array items, or KiB of a string: what a read pays per revision replayed. */
function unitsOf(value: Typed | null): number {
  if (value === null || !("json" in value)) return 0;
  if (Array.isArray(value.json)) return value.json.length;
  if (typeof value.json === "string") return Math.ceil(value.json.length / 1024);
  return 0;
}

/** One pending write of a task against a checkpoint. */
export interface StoredWrite {
  [key: string]: Json;
  task: string;
  path: string;
  idx: number;
  channel: string;
  value: Typed;
}

/** Conversation scope, keyed by checkpoint id: its pending writes, in LangGraph's replay order. */
export interface WritesState {
  [key: string]: Json;
  writes: StoredWrite[];
}
export const WritesDoc = defineDocFamily<WritesState, "conversation">({
  kind: "langgraph.writes",
  version: 1,
  scope: "conversation",
  initial: () => ({ writes: [] }),
  checkpointWhen: (_value, _ops, { deltasSinceBase }) => deltasSinceBase + 1 >= 16,
});

export const asConversation = (id: number): ConversationId => id as ConversationId;
export const asEntry = (id: number): EntryId => id as EntryId;
