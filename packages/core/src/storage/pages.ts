import { encodeCursor } from "./requests.js";
import type { Order, Page } from "./port.js";

/**
 * The exclusive id bound a page starts after. Without a cursor it lies beyond
 * every id Durably writes (1 up to 2^53) in scan order, so one `id > ?` /
 * `id < ?` comparison serves first and later pages alike. A store whose ids
 * can be damaged outside that range should not bound a first page by it: a
 * row damaged to 0, a negative id or one beyond 2^53 would be passed over
 * instead of met and reported. The SQLite and PostgreSQL adapters no longer
 * use it for that reason (a first page there is unbounded, or bounded by the
 * ends of the column's integer type).
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
