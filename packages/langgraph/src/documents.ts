import {
  defineDoc,
  defineDocFamily,
  type ConversationId,
  type EntryId,
  type Json,
} from "@durably/core";
import { pagedLength } from "./pages.js";
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

/**
 * Conversation scope: the namespace's checkpoints sorted by id (in pages, see
 * pages.ts), the channels kept in documents, and the entry of the last put
 * (it tells whether the published value is the one a commit's draft starts
 * from).
 */
export interface IndexState {
  [key: string]: Json;
  thread: string;
  ns: string;
  checkpoints: IndexItem[][];
  channels: string[];
  last: number;
}
export const IndexDoc = defineDoc<IndexState, "conversation">({
  kind: "langgraph.checkpoints",
  version: 1,
  scope: "conversation",
  initial: () => ({ thread: "", ns: "", checkpoints: [], channels: [], last: 0 }),
  checkpointWhen: (value, _ops, { deltasSinceBase }) =>
    geometricBase(pagedLength(value.checkpoints), deltasSinceBase),
});

/**
 * A channel value kept in a document: an array as the JSON text of each item
 * (in pages), or a string as itself. Serialized by LangGraph's
 * JsonPlusSerializer, the array's text is `[` + items joined by `,` + `]`.
 */
export type ChannelValue = { pages: string[][] } | { string: string };

/**
 * Conversation scope, keyed by channel name, every revision kept: a channel
 * whose value is an array or a long string. `entry` is the checkpoint entry
 * whose commit wrote this value, so the value a checkpoint saw is the
 * document as of that entry (`snapshotAsOf`).
 */
export interface ChannelState {
  [key: string]: Json;
  entry: number;
  value: ChannelValue | null;
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
function unitsOf(value: ChannelValue | null): number {
  if (value === null) return 0;
  if ("pages" in value) return pagedLength(value.pages);
  return Math.ceil(value.string.length / 1024);
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
