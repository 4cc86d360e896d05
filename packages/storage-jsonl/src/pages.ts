import {
  encodeCursor,
  isPositiveSafeInteger,
  StorageRequestError,
  type Order,
  type Page,
} from "@durably/core";

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

/** A query field holding an id: a wrong type is a `bad-query`, never an empty result. */
export function idField(
  scan: string,
  query: object,
  field: string,
  required: boolean,
): number | undefined {
  const value = (query as Record<string, unknown>)[field];
  if (value === undefined) {
    if (required) throw new StorageRequestError("bad-query", `${scan}: ${field} is required`);
    return undefined;
  }
  if (!isPositiveSafeInteger(value))
    throw new StorageRequestError(
      "bad-query",
      `${scan}: ${field} must be a positive integer id, got ${JSON.stringify(value)}`,
    );
  return value;
}

/** A query field limited to some values (or any string). */
export function oneOfField<T extends string | boolean>(
  scan: string,
  query: object,
  field: string,
  allowed: readonly T[] | "string",
): T | undefined {
  const value = (query as Record<string, unknown>)[field];
  if (value === undefined) return undefined;
  const ok =
    allowed === "string"
      ? typeof value === "string"
      : (allowed as readonly unknown[]).includes(value);
  if (!ok)
    throw new StorageRequestError(
      "bad-query",
      `${scan}: ${field} must be ${allowed === "string" ? "a string" : allowed.map((a) => JSON.stringify(a)).join(" or ")}, got ${JSON.stringify(value)}`,
    );
  return value as T;
}
