import type { Json } from "../domain/json.js";

/**
 * Freezes a JSON value in place, skipping subtrees that are already frozen
 * (values the session shares are frozen once, so a commit only pays for the
 * nodes it created).
 */
export function deepFreeze<T extends Json>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const item of value) deepFreeze(item);
  } else {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, Json>)[key] as Json);
  }
  return value;
}
