import type { EntryRecord } from "@durably/core";
import { CheckpointDataCorrupted } from "./errors.js";
import { isTyped, type Typed } from "./typed-value.js";

export const CHECKPOINT_ENTRY = "langgraph.checkpoint";
export const THREAD_ENTRY = "langgraph.thread";

export type Version = string | number;

/**
 * Where this checkpoint stored a channel it changed (a channel in put's
 * `newVersions`): `value` inline, `doc: true` in the channel's document as of
 * this entry, neither when the channel had no value (LangGraph's "empty").
 */
export type StoredChannel =
  { version: Version; value: Typed } | { version: Version; doc: true } | { version: Version };

/** The `data` of a checkpoint entry. */
export interface CheckpointEntryData {
  id: string;
  parent?: string;
  /** The checkpoint without `channel_values` and `channel_versions`, serialized. */
  checkpoint: Typed;
  metadata: Typed;
  /** `channel_versions`, as given. */
  versions: { [channel: string]: Version };
  stored: { [channel: string]: StoredChannel };
  /** Channels at a version an earlier checkpoint stored: the entry that stored it. */
  carried: { [channel: string]: number };
}

/** A checkpoint entry read back, its shape checked. */
export interface CheckpointEntry {
  entryId: number;
  conversationId: number;
  data: CheckpointEntryData;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isVersion = (v: unknown): v is Version =>
  typeof v === "string" || (typeof v === "number" && Number.isFinite(v));

/** Validates a stored entry as a checkpoint entry, naming the entry and field on any mismatch. */
export function checkpointEntryOf(entry: EntryRecord): CheckpointEntry {
  const where = `conversation ${entry.conversationId} entry ${entry.id}`;
  const bad = (field: string, what: string): never => {
    throw new CheckpointDataCorrupted(`${where}: ${field} ${what}`);
  };
  if (entry.kind !== CHECKPOINT_ENTRY)
    bad("kind", `is ${JSON.stringify(entry.kind)}, not a checkpoint`);
  const d = entry.data;
  if (!isObject(d)) return bad("data", "is not an object");
  if (typeof d.id !== "string") bad("data.id", "is not a string");
  if (d.parent !== undefined && typeof d.parent !== "string") bad("data.parent", "is not a string");
  if (!isTyped(d.checkpoint)) bad("data.checkpoint", "is not a serialized value");
  if (!isTyped(d.metadata)) bad("data.metadata", "is not a serialized value");
  if (!isObject(d.versions)) return bad("data.versions", "is not an object");
  for (const [c, v] of Object.entries(d.versions))
    if (!isVersion(v)) bad(`data.versions[${JSON.stringify(c)}]`, "is not a channel version");
  if (!isObject(d.stored)) return bad("data.stored", "is not an object");
  for (const [c, s] of Object.entries(d.stored)) {
    const field = `data.stored[${JSON.stringify(c)}]`;
    if (!isObject(s) || !isVersion(s.version)) bad(field, "is not a stored channel");
    const x = s as Record<string, unknown>;
    if (x.value !== undefined && !isTyped(x.value))
      bad(`${field}.value`, "is not a serialized value");
    if (x.doc !== undefined && x.doc !== true) bad(`${field}.doc`, "is not true");
  }
  if (!isObject(d.carried)) return bad("data.carried", "is not an object");
  for (const [c, id] of Object.entries(d.carried))
    if (!Number.isSafeInteger(id) || (id as number) < 1)
      bad(`data.carried[${JSON.stringify(c)}]`, "is not an entry id");
  return {
    entryId: entry.id,
    conversationId: entry.conversationId,
    data: d as unknown as CheckpointEntryData,
  };
}

/** Versions compare by their text, as LangGraph's SQL savers key them. */
export const sameVersion = (a: Version | undefined, b: Version | undefined): boolean =>
  a !== undefined && b !== undefined && String(a) === String(b);
