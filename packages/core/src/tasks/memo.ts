import type { Json, JsonObject } from "../domain/json.js";

/**
 * How a memo is stored under `task.memos[key]`: `{ status: "started" }` is
 * the intent marker committed before an at-most-once effect runs;
 * `{ status: "done", value? }` is its recorded result.
 */
export type MemoEntry = { status: "started" } | { status: "done"; value?: Json };

export type MemoGuard = "atMostOnce" | "atLeastOnce";

export interface MemoOptions {
  /**
   * "atMostOnce" (default): an intent marker is committed before `fn` runs;
   * if the run dies (or `fn` throws) before the result is committed, later
   * calls throw `MemoInterrupted` instead of running `fn` again.
   * "atLeastOnce": no marker; after a crash `fn` runs again until its result
   * is committed (for idempotent effects; one commit cheaper).
   */
  guard?: MemoGuard;
}

export function memoEntry(memos: JsonObject | undefined, key: string): MemoEntry | undefined {
  if (!memos || !Object.prototype.hasOwnProperty.call(memos, key)) return undefined;
  const entry = memos[key] as { status?: unknown } | null;
  if (typeof entry === "object" && entry !== null) {
    if (entry.status === "started") return { status: "started" };
    if (entry.status === "done") return entry as MemoEntry;
  }
  throw new TypeError(
    `task.memos[${JSON.stringify(key)}]: not a memo entry ({ status: "started" | "done", value? })`,
  );
}
