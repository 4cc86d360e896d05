import { StorageRequestError } from "../domain/errors.js";
import { isPositiveSafeInteger } from "../domain/ids.js";

/*
 * Scan query fields arrive untyped from callers. A field of the wrong type
 * must be a `bad-query` naming the scan and the field, never a silently empty
 * page, and every backend must say so the same way.
 */

/** Reads an id field; `required` makes absence a `bad-query` too, for scans that cannot run without it. */
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

/**
 * Reads an optional filter field limited to `allowed` (or, with `"string"`,
 * any string). A value outside the set could never match a stored record, so
 * it is reported instead of answered with nothing.
 */
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
