import type { Session, Transaction } from "@durably/core";
import { tailKey, type SaverContext } from "./context.js";
import { ChannelDoc, asConversation, type ChannelState, type ChannelValue } from "./documents.js";
import type { StoredChannel, Version } from "./entry-format.js";
import { encodeItems, encodeTyped, itemizes, type Typed } from "./typed-value.js";
import { appendPaged, pagedAt, pagedLength, truncatePaged } from "./pages.js";
import { sameItem } from "./same-item.js";

/** Strings at least this long go to a channel document (appends); shorter ones stay in the entry. */
const STRING_DOC_CHARS = 1024;

/**
 * How `put` stores one channel listed in `newVersions`:
 * - `empty`: the channel has no value at that version;
 * - `inline`: the serialized value goes into the checkpoint entry;
 * - `doc`: an array (item by item) or a long string goes into the channel's
 *   document, as the ops that turn the document's value into it;
 * - `append`: the fast path of `doc` when the new array holds the very same
 *   items as the array this saver last stored or read for the channel, plus
 *   new ones: only the new items are serialized and appended (`after` names
 *   the entry whose value must still be the document's, else the commit
 *   falls back to `doc`).
 */
export type ChannelPlan =
  | { kind: "empty"; channel: string; version: Version }
  | { kind: "inline"; channel: string; version: Version; typed: Typed }
  | { kind: "doc"; channel: string; version: Version; value: Desired; raw: unknown }
  | {
      kind: "append";
      channel: string;
      version: Version;
      after: number;
      items: string[];
      raw: readonly unknown[];
    };

/** What a channel document should hold: the array's item texts, or the string. */
type Desired = { items: string[] } | { string: string };

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
  if (itemizes(ctx.serde)) {
    if (Array.isArray(raw)) {
      // A copy, taken before the first await. LangGraph may hand every put the same array
      // object and grow it in place (a node that pushes onto its state and returns it, a
      // reducer that pushes): compared with the live array it last saw, the saver would find
      // nothing new and store nothing; and items encoded later, from the live array, could be
      // ones this put was not given.
      const items: readonly unknown[] = raw.slice();
      const previous = ctx.trustItems
        ? ctx.tails.get(tailKey(address.threadId, address.ns, channel))
        : undefined;
      if (previous && samePrefix(items, previous.raw))
        return {
          kind: "append",
          channel,
          version,
          after: previous.entry,
          items: await encodeItems(ctx.serde, items.slice(previous.raw.length)),
          raw: items,
        };
      return {
        kind: "doc",
        channel,
        version,
        value: { items: await encodeItems(ctx.serde, items) },
        raw: items,
      };
    }
    if (typeof raw === "string" && raw.length >= STRING_DOC_CHARS)
      return { kind: "doc", channel, version, value: { string: raw }, raw };
  }
  return { kind: "inline", channel, version, typed: await encodeTyped(ctx.serde, raw) };
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
 * as few ops as it can: the appended items; or a cut from the first item that
 * differs, then the rest appended; or, for strings, the append/trim ops the
 * draft derives; the whole value only when the shapes differ. `entry` is this
 * commit's checkpoint entry.
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
    "pages" in current
  ) {
    appendPaged(current.pages, plan.items);
  } else {
    const desired: Desired =
      plan.kind === "doc" ? plan.value : { items: await encodeItems(ctx.serde, plan.raw) };
    // Diff against the published value (frozen, no draft views) when it is the draft's own base.
    const published = await session.snapshot(ChannelDoc, conv, plan.channel);
    const base =
      published !== undefined && published.entry === draft.entry ? published.value : null;
    applyValue(draft, base, desired);
  }
  draft.entry = entry;
}

function applyValue(draft: ChannelState, base: ChannelValue | null, next: Desired): void {
  const current = draft.value;
  if (base !== null && current !== null) {
    if ("pages" in base && "items" in next && "pages" in current) {
      const before = base.pages;
      const length = pagedLength(before);
      const limit = Math.min(length, next.items.length);
      let same = 0;
      while (same < limit && sameItem(pagedAt(before, same) as string, next.items[same] as string))
        same++;
      if (same < length) truncatePaged(current.pages, same);
      appendPaged(current.pages, next.items.slice(same));
      return;
    }
    if ("string" in base && "string" in next && "string" in current) {
      current.string = next.string;
      return;
    }
  }
  if ("items" in next) {
    const pages: string[][] = [];
    appendPaged(pages, next.items);
    draft.value = { pages };
  } else draft.value = { string: next.string };
}
