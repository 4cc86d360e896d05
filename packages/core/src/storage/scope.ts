import { StorageRequestError } from "../domain/errors.js";
import { isPositiveSafeInteger } from "../domain/ids.js";
import type { DocumentScope } from "../domain/records.js";
import type { DocumentAddress } from "./port.js";

/** A compact string naming a document scope: `s`, `c:<id>` or `t:<id>`. Adapters may use it as an index column or key part. */
export function scopeKey(scope: DocumentScope): string {
  switch (scope.kind) {
    case "session":
      return "s";
    case "conversation":
      return `c:${scope.conversationId}`;
    case "task":
      return `t:${scope.taskId}`;
  }
}

/** Throws `StorageRequestError` unless `scope` is a well-formed scope. */
export function checkScope(scope: unknown): DocumentScope {
  const s = scope as Partial<Record<string, unknown>> | null;
  if (typeof s === "object" && s !== null) {
    if (s.kind === "session") return scope as DocumentScope;
    if (s.kind === "conversation" && isPositiveSafeInteger(s.conversationId))
      return scope as DocumentScope;
    if (s.kind === "task" && isPositiveSafeInteger(s.taskId)) return scope as DocumentScope;
  }
  throw new StorageRequestError("bad-argument", `not a document scope: ${JSON.stringify(scope)}`);
}

/**
 * Throws `StorageRequestError` unless `address` is a well-formed document
 * address (string kind, optional string key, valid scope); returns a clean
 * copy holding only those fields.
 */
export function checkAddress(address: unknown): DocumentAddress {
  const a = address as Partial<Record<string, unknown>> | null;
  if (typeof a !== "object" || a === null || typeof a.kind !== "string")
    throw new StorageRequestError(
      "bad-argument",
      `a document address needs a string kind, got ${JSON.stringify(address)}`,
    );
  if (a.key !== undefined && typeof a.key !== "string")
    throw new StorageRequestError(
      "bad-argument",
      `a document address key must be a string, got ${JSON.stringify(a.key)}`,
    );
  return {
    kind: a.kind,
    scope: checkScope(a.scope),
    ...(a.key === undefined ? {} : { key: a.key }),
  };
}
