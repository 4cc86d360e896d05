import type { Json, Session, Transaction } from "@durably/core";
import { tailKey, type SaverContext } from "./context.js";
import { ChannelDoc, asConversation, type ChannelState } from "./documents.js";
import type { StoredChannel, Version } from "./entry-format.js";
import { encodeTyped, type Typed } from "./typed-value.js";

/** Strings at least this long go to a channel document (deltas); shorter ones stay in the entry. */
const STRING_DOC_CHARS = 1024;

/**
 * How `put` stores one channel listed in `newVersions`:
 * - `empty`: the channel has no value at that version;
 * - `inline`: the serialized value goes into the checkpoint entry;
 * - `doc`: the value (an array, or a long string) goes into the channel's
 *   document, as the ops that turn the document's value into it;
 * - `append`: the fast path of `doc` when the new array holds the very same
 *   items as the array this saver stored last, plus new ones: only the new
 *   items are serialized and appended (`after` names the entry whose value
 *   must still be in the document, else the commit falls back to `doc`).
 */
export type ChannelPlan =
  | { kind: "empty"; channel: string; version: Version }
  | { kind: "inline"; channel: string; version: Version; typed: Typed }
  | { kind: "doc"; channel: string; version: Version; typed: Typed; raw: unknown }
  | {
      kind: "append";
      channel: string;
      version: Version;
      after: number;
      items: Json[];
      raw: readonly unknown[];
    };

function goesToDoc(typed: Typed): boolean {
  if (!("json" in typed) || typed.type !== "json") return false;
  return (
    Array.isArray(typed.json) ||
    (typeof typed.json === "string" && typed.json.length >= STRING_DOC_CHARS)
  );
}

function samePrefix(next: readonly unknown[], previous: readonly unknown[]): boolean {
  if (next.length < previous.length) return false;
  for (let i = 0; i < previous.length; i++) if (next[i] !== previous[i]) return false;
  return true;
}

/** Serializes what a channel needs (outside the commit line, so other commits are not held up). */
export async function planChannel(
  ctx: SaverContext,
  address: { threadId: string; ns: string },
  channel: string,
  version: Version,
  values: Record<string, unknown>,
): Promise<ChannelPlan> {
  if (!Object.prototype.hasOwnProperty.call(values, channel))
    return { kind: "empty", channel, version };
  const raw = values[channel];
  if (ctx.trustItems && Array.isArray(raw)) {
    const previous = ctx.tails.get(tailKey(address.threadId, address.ns, channel));
    if (previous && samePrefix(raw, previous.raw)) {
      const tail = await encodeTyped(ctx.serde, raw.slice(previous.raw.length));
      if ("json" in tail && Array.isArray(tail.json))
        return {
          kind: "append",
          channel,
          version,
          after: previous.entry,
          items: tail.json,
          raw: raw as readonly unknown[],
        };
    }
  }
  const typed = await encodeTyped(ctx.serde, raw);
  return goesToDoc(typed)
    ? { kind: "doc", channel, version, typed, raw }
    : { kind: "inline", channel, version, typed };
}

/** What the checkpoint entry records for a planned channel. */
export function storedOf(plan: ChannelPlan): StoredChannel {
  switch (plan.kind) {
    case "empty":
      return { version: plan.version };
    case "inline":
      return { version: plan.version, value: plan.typed };
    default:
      return { version: plan.version, doc: true };
  }
}

/**
 * Writes a `doc`/`append` plan into the channel document inside the commit,
 * as few ops as it can: the appended items, or one splice from the first item
 * that differs, or string append/trim ops (the draft computes those); a whole
 * value only when the shapes differ. `entry` is the checkpoint entry of this
 * commit.
 */
export async function writeChannel(
  ctx: SaverContext,
  session: Session,
  tx: Transaction,
  conversationId: number,
  plan: Extract<ChannelPlan, { kind: "doc" | "append" }>,
  entry: number,
): Promise<void> {
  const conv = asConversation(conversationId);
  const draft = await tx.doc(ChannelDoc, conv, plan.channel, undefined);
  const current = draft.value;
  if (
    plan.kind === "append" &&
    draft.entry === plan.after &&
    current !== null &&
    "json" in current &&
    Array.isArray(current.json)
  ) {
    appendAll(current.json, plan.items);
  } else {
    const typed = plan.kind === "doc" ? plan.typed : await encodeTyped(ctx.serde, plan.raw);
    // Diff against the published value (frozen, no draft views) when it is the draft's own base.
    const published = await session.snapshot(ChannelDoc, conv, plan.channel);
    const base =
      published !== undefined && published.entry === draft.entry ? published.value : null;
    applyValue(draft, base, typed);
  }
  draft.entry = entry;
}

function applyValue(draft: ChannelState, base: Typed | null, next: Typed): void {
  const current = draft.value;
  if (
    base !== null &&
    current !== null &&
    "json" in base &&
    "json" in next &&
    "json" in current &&
    base.type === "json" &&
    next.type === "json"
  ) {
    const before = base.json;
    const after = next.json;
    if (Array.isArray(before) && Array.isArray(after) && Array.isArray(current.json)) {
      let same = 0;
      const limit = Math.min(before.length, after.length);
      while (same < limit && sameSerialized(before[same] as Json, after[same] as Json)) same++;
      if (same < before.length) current.json.splice(same, before.length - same);
      appendAll(current.json, after.slice(same));
      return;
    }
    if (typeof before === "string" && typeof after === "string") {
      current.json = after;
      return;
    }
  }
  draft.value = next;
}

/** Pushes in slices: spreading a very long array into one call would overflow the stack. */
function appendAll(target: Json[], items: readonly Json[]): void {
  const SLICE = 8192;
  for (let i = 0; i < items.length; i += SLICE) target.push(...items.slice(i, i + SLICE));
}

/** How LangGraph's serializer writes `undefined` (a loaded value re-serialized drops such keys). */
function isUndefinedRecord(value: Json | undefined): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    value.lc === 2 &&
    value.type === "undefined" &&
    Object.keys(value).length === 2
  );
}

/**
 * Equality of two serialized items as values: key order does not matter, and
 * a key holding the serializer's `undefined` record equals an absent key. A
 * message loaded from storage and serialized again differs from its first
 * serialization in exactly these ways (e.g. a ToolMessage's undefined
 * `artifact`), and must not count as changed.
 */
export function sameSerialized(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameSerialized(a[i], b[i])) return false;
    return true;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const x = Object.prototype.hasOwnProperty.call(a, key) ? a[key] : undefined;
    const y = Object.prototype.hasOwnProperty.call(b, key) ? b[key] : undefined;
    if (x === undefined || y === undefined) {
      if (!isUndefinedRecord(x ?? y)) return false;
      continue;
    }
    if (!sameSerialized(x, y)) return false;
  }
  return true;
}
