import { encodeCursor, type Order, type Page } from "@durably/core";

/** The exclusive id bound of a page: after the cursor, or before every id on a first page. */
export function startAfter(order: Order, cursor: number | undefined): number {
  return cursor ?? (order === "ascending" ? 0 : Number.MAX_SAFE_INTEGER + 1);
}

/**
 * Turns `limit + 1` fetched rows into a page: the extra row only proves that
 * more follow, so `next` is present exactly when another item exists.
 */
export function toPage<R extends { id: number }, T>(
  scan: string,
  query: object,
  limit: number,
  rows: readonly R[],
  parse: (row: R) => T,
): Page<T> {
  const page = rows.length > limit ? rows.slice(0, limit) : rows;
  const items = page.map(parse);
  const last = page[page.length - 1];
  if (rows.length <= limit || last === undefined) return { items };
  return { items, next: encodeCursor(scan, query, last.id) };
}
