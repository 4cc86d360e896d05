import { isPositiveSafeInteger, StorageRequestError } from "@durably/core";

/** Field checks for scan queries: a wrong type is a `bad-query`, never an empty result. */
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
