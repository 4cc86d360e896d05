import { StorageRequestError } from "../domain/errors.js";
import { isPositiveSafeInteger } from "../domain/ids.js";
import type { DocumentScope } from "../domain/records.js";

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
