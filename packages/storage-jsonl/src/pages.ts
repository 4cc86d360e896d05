import { encodeCursor, type Order, type Page } from "@durably/core";

/**
 * Builds a page from candidate ids in scan order: up to `limit` matches,
 * looking one match further so `next` is present iff another item follows.
 */
export function collectPage<T>(
  candidates: Iterable<number>,
  limit: number,
  pick: (id: number) => T | undefined,
  scan: string,
  query: object,
): Page<T> {
  const items: T[] = [];
  let lastId = 0;
  for (const id of candidates) {
    const item = pick(id);
    if (item === undefined) continue;
    if (items.length === limit) return { items, next: encodeCursor(scan, query, lastId) };
    items.push(item);
    lastId = id;
  }
  return { items };
}

/** The id range left to scan after a cursor position. */
export function rangeAfter(after: number | undefined, order: Order): { min: number; max: number } {
  if (after === undefined) return { min: 1, max: Number.MAX_SAFE_INTEGER };
  return order === "ascending"
    ? { min: after + 1, max: Number.MAX_SAFE_INTEGER }
    : { min: 1, max: after - 1 };
}
