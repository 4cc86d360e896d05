import { isPositiveSafeInteger, StorageRequestError } from "@durably/core";

/** Query-field checks that name the scan and the field; a malformed query is a `bad-query`. */
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

export function stringField(
  scan: string,
  query: object,
  field: string,
  allowed?: ReadonlySet<string>,
): string | undefined {
  const value = (query as Record<string, unknown>)[field];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || (allowed !== undefined && !allowed.has(value)))
    throw new StorageRequestError(
      "bad-query",
      `${scan}: ${field} has an invalid value ${JSON.stringify(value)}`,
    );
  return value;
}

export function booleanField(scan: string, query: object, field: string): boolean | undefined {
  const value = (query as Record<string, unknown>)[field];
  if (value === undefined) return undefined;
  if (typeof value !== "boolean")
    throw new StorageRequestError(
      "bad-query",
      `${scan}: ${field} must be a boolean, got ${JSON.stringify(value)}`,
    );
  return value;
}
