import { StorageRequestError } from "../domain/errors.js";
import type { Json, JsonObject } from "../domain/json.js";
import type { Cursor, Page } from "../storage/port.js";
import { checkLimit, decodeCursor, encodeCursor } from "../storage/requests.js";

export interface MergedScanArgs<T extends { id: number }> {
  /** Scan name, part of the cursor fingerprint. */
  name: string;
  query: object;
  limit: number;
  cursor: Cursor | undefined;
  descending: boolean;
  /** Overlay records that match the query (newest versions). */
  overlay: readonly T[];
  /** True when the overlay holds a (newer) version of this id, so storage's copy is stale. */
  overridden: (id: number) => boolean;
  /** True when the overlay holds no record of this table at all (storage's `next` is then exact). */
  overlayEmpty: boolean;
  fetch: (limit: number, cursor: Cursor | undefined) => Promise<Page<T>>;
}

interface Position {
  /** Storage cursor of the page holding the next unreturned storage item; null: from the start. */
  s: Cursor | null;
  /** Id of the last item returned; later pages return only items beyond it. */
  after: number | null;
  /** Storage has nothing beyond `s`. */
  done: boolean;
}

function decodePosition(name: string, query: object, cursor: Cursor | undefined): Position {
  if (cursor === undefined) return { s: null, after: null, done: false };
  const p = decodeCursor(name, query, cursor) as JsonObject;
  const valid =
    typeof p === "object" &&
    p !== null &&
    (p.s === null || (typeof p.s === "object" && !Array.isArray(p.s))) &&
    (p.after === null || typeof p.after === "number") &&
    typeof p.done === "boolean";
  if (!valid)
    throw new StorageRequestError("bad-cursor", `${name}: the cursor position is malformed`);
  return p as unknown as Position;
}

/**
 * A scan over storage plus the overlay of prepared commits, with the
 * storage contract's page rules: ordered by id, at most `limit` items,
 * `next` present iff more items follow, every item exactly once. The
 * session's cursor wraps storage's (which stays opaque) with the last id
 * returned, so a page may end in the middle of a storage page.
 */
export async function mergedScan<T extends { id: number }>(
  args: MergedScanArgs<T>,
): Promise<Page<T>> {
  const limit = checkLimit(args.limit);
  const name = `session.${args.name}`;
  const position = decodePosition(name, args.query, args.cursor);
  const beyond = (id: number): boolean =>
    position.after === null ? true : args.descending ? id < position.after : id > position.after;
  const before = (a: number, b: number): boolean => (args.descending ? a > b : a < b);

  const fromStorage: { item: T; from: Cursor | null }[] = [];
  let cursor: Cursor | null = position.s;
  let done = position.done;
  let moreCertain = false;
  while (!done && fromStorage.length <= limit) {
    const fetchedWith = cursor;
    const page = await args.fetch(limit, cursor ?? undefined);
    for (const item of page.items)
      if (beyond(item.id) && !args.overridden(item.id))
        fromStorage.push({ item, from: fetchedWith });
    if (page.next === undefined) done = true;
    else cursor = page.next;
    if (!done && args.overlayEmpty && fromStorage.length >= limit) {
      moreCertain = true;
      break;
    }
  }

  const fromOverlay = args.overlay
    .filter((r) => beyond(r.id))
    .sort((a, b) => (before(a.id, b.id) ? -1 : 1));
  const merged: { item: T; from: Cursor | null | "overlay" }[] = [];
  let i = 0;
  let j = 0;
  while (merged.length <= limit && (i < fromStorage.length || j < fromOverlay.length)) {
    const s = fromStorage[i];
    const o = fromOverlay[j];
    if (s && (!o || before(s.item.id, o.id))) {
      merged.push(s);
      i++;
    } else if (o) {
      if (s && s.item.id === o.id) i++; // stored meanwhile: the overlay's copy is the one to return
      merged.push({ item: o, from: "overlay" });
      j++;
    }
  }
  const items = merged.slice(0, limit).map((m) => m.item);
  const hasMore = merged.length > limit || moreCertain;
  if (!hasMore || items.length === 0) return { items };
  const last = (items[items.length - 1] as T).id;
  const taken = new Set(items.map((item) => item.id));
  // Storage items come in order, so every candidate not returned lies beyond `last`.
  const firstUnreturned = fromStorage.find((s) => !taken.has(s.item.id));
  const resume: Position = firstUnreturned
    ? { s: firstUnreturned.from, after: last, done: false }
    : { s: cursor, after: last, done };
  return { items, next: encodeCursor(name, args.query, resume as unknown as Json) };
}
