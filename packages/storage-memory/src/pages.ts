import { encodeCursor, type Cursor, type Order, type Page } from "@durably/core";

/**
 * Builds a page from candidate ids already in scan order, starting after the
 * cursor position: takes up to `limit` matches and looks one match further so
 * `next` is present iff another item follows.
 */
export function collectPage<T>(
  candidates: Iterable<number>,
  limit: number,
  pick: (id: number) => T | undefined,
  cursorFor: (lastId: number) => Cursor,
): Page<T> {
  const items: T[] = [];
  let lastId = 0;
  for (const id of candidates) {
    const item = pick(id);
    if (item === undefined) continue;
    if (items.length === limit) return { items, next: cursorFor(lastId) };
    items.push(item);
    lastId = id;
  }
  return { items };
}

/** The id range still to scan after a cursor position, for ids in `[1, MAX_SAFE_INTEGER]`. */
export function rangeAfter(after: number | undefined, order: Order): { min: number; max: number } {
  if (after === undefined) return { min: 1, max: Number.MAX_SAFE_INTEGER };
  return order === "ascending"
    ? { min: after + 1, max: Number.MAX_SAFE_INTEGER }
    : { min: 1, max: after - 1 };
}

export function idCursor(scan: string, query: object): (lastId: number) => Cursor {
  return (lastId) => encodeCursor(scan, query, lastId);
}
