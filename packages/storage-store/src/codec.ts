import { StorageCorrupted, type Json } from "@durably/core";

/** Parses a stored JSON value; anything unparsable or of the wrong shape is corruption naming the key. */
export function decode(key: string, raw: string): Json {
  try {
    return JSON.parse(raw) as Json;
  } catch (error) {
    throw new StorageCorrupted(
      `key ${key}: stored value is not JSON (${(error as Error).message})`,
      { key },
      { cause: error },
    );
  }
}

/** Parses a stored JSON object and checks `valid`; otherwise corruption naming the key and `what` was expected. */
export function decodeObject<T>(
  key: string,
  raw: string,
  what: string,
  valid: (value: Record<string, unknown>) => boolean,
): T {
  const value = decode(key, raw);
  if (typeof value !== "object" || value === null || Array.isArray(value) || !valid(value))
    throw new StorageCorrupted(
      `key ${key}: stored value is not ${what}: ${raw.length > 200 ? raw.slice(0, 200) + "…" : raw}`,
      {
        key,
      },
    );
  return value as T;
}

export const isId = (v: unknown): v is number =>
  typeof v === "number" && Number.isSafeInteger(v) && v > 0;
