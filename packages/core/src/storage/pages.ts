import { encodeCursor } from "./requests.js";
import type { Order, Page } from "./port.js";

/**
 * The exclusive id bound a page starts after. Without a cursor it lies beyond
 * every id in scan order, so one `id > ?` / `id < ?` comparison serves first
 * and later pages alike.
 */
export function startAfter(order: Order, cursor: number | undefined): number {
  return cursor ?? (order === "ascending" ? 0 : Number.MAX_SAFE_INTEGER + 1);
}

/**
 * Turns up to `limit + 1` fetched rows (in scan order) into a page. The extra
 * row only proves that more follow, so `next` is present exactly when another
 * item exists and a caller never pays for an empty last page.
 */
export function pageFromRows<R extends { id: number }, T>(
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
