import { StorageRequestError } from "../domain/errors.js";
import { isPositiveSafeInteger } from "../domain/ids.js";
import { canonicalJson, type Json, type JsonObject } from "../domain/json.js";
import type { Cursor, Order } from "./port.js";

/** Rejects a limit that is not a positive safe integer. */
export function checkLimit(limit: unknown): number {
  if (!isPositiveSafeInteger(limit))
    throw new StorageRequestError(
      "bad-limit",
      `limit must be a positive integer, got ${String(limit)}`,
    );
  return limit;
}

/**
 * Rejects a query object with fields outside `allowed`, or an `order` other
 * than ascending/descending. Returns the order, defaulting to `defaultOrder`.
 */
export function checkQuery(
  scan: string,
  query: unknown,
  allowed: readonly string[],
  defaultOrder: Order,
): Order {
  if (typeof query !== "object" || query === null || Array.isArray(query))
    throw new StorageRequestError("bad-query", `${scan}: the query must be an object`);
  for (const key of Object.keys(query)) {
    if (key !== "order" && !allowed.includes(key))
      throw new StorageRequestError(
        "bad-query",
        `${scan}: unknown query field ${JSON.stringify(key)}`,
      );
  }
  const order = (query as { order?: unknown }).order;
  if (order === undefined) return defaultOrder;
  if (order !== "ascending" && order !== "descending")
    throw new StorageRequestError(
      "bad-query",
      `${scan}: order must be "ascending" or "descending", got ${JSON.stringify(order)}`,
    );
  return order;
}

/** Rejects an argument that must be an id (positive safe integer). */
export function checkId(what: string, id: unknown): number {
  if (!isPositiveSafeInteger(id))
    throw new StorageRequestError(
      "bad-argument",
      `${what} must be a positive integer id, got ${String(id)}`,
    );
  return id;
}

/** Rejects a `Seq | "current"` argument that is neither. */
export function checkAt(at: unknown): number | "current" {
  if (at === "current" || isPositiveSafeInteger(at)) return at;
  throw new StorageRequestError(
    "bad-argument",
    `at must be a positive seq or "current", got ${String(at)}`,
  );
}

function fingerprint(scan: string, query: object): string {
  const fields: JsonObject = {};
  for (const [key, value] of Object.entries(query))
    if (value !== undefined) fields[key] = value as Json;
  return `${scan}:${canonicalJson(fields)}`;
}

/**
 * Cursor codec adapters may reuse: the cursor carries the scan name and a
 * fingerprint of the query, so it only round-trips to the same query.
 */
export function encodeCursor(scan: string, query: object, position: Json): Cursor {
  return { v: 1, q: fingerprint(scan, query), p: position };
}

/** Returns the position stored by `encodeCursor`, or throws `StorageRequestError("bad-cursor")`. */
export function decodeCursor(scan: string, query: object, cursor: unknown): Json {
  if (
    typeof cursor !== "object" ||
    cursor === null ||
    Array.isArray(cursor) ||
    (cursor as JsonObject).v !== 1 ||
    !("p" in cursor)
  )
    throw new StorageRequestError("bad-cursor", `${scan}: not a cursor of this storage`);
  if ((cursor as JsonObject).q !== fingerprint(scan, query))
    throw new StorageRequestError("bad-cursor", `${scan}: the cursor belongs to a different query`);
  return (cursor as JsonObject).p as Json;
}

/** Decodes a cursor whose position is an id (the common case). */
export function decodeIdCursor(
  scan: string,
  query: object,
  cursor: Cursor | undefined,
): number | undefined {
  if (cursor === undefined) return undefined;
  const position = decodeCursor(scan, query, cursor);
  if (!isPositiveSafeInteger(position))
    throw new StorageRequestError("bad-cursor", `${scan}: the cursor position is not an id`);
  return position;
}
