import type { Json } from "../domain/json.js";
import { copiedBound } from "../domain/json-copy.js";
import {
  checkedSize,
  jsonBound,
  jsonBytes,
  MAX_COMMIT_BYTES,
  MAX_VALUE_BYTES,
} from "../domain/json-size.js";
import type { StorageWrite } from "../storage/port.js";

/*
 * Size limits, checked where a value is written into a transaction (the
 * same place as the nesting limit): a value over the limit is refused with
 * a TypeError naming its path, before anything reaches storage. The counts
 * are upper bounds summed during the copy walk; the exact size is computed
 * only for a value (or a commit) whose bound is over its limit.
 */

/** The limits a session enforces, in bytes of JSON text. */
export interface ValueLimits {
  /** One value: an entry field, a task record, a submission's content or detail, a document, one op. */
  readonly valueBytes: number;
  /** The sum of one commit's values; also the budget of one group-commit storage call. */
  readonly commitBytes: number;
}

export const DEFAULT_LIMITS: ValueLimits = Object.freeze({
  valueBytes: MAX_VALUE_BYTES,
  commitBytes: MAX_COMMIT_BYTES,
});

/** The session option: lower limits only (a higher one could accept what some backend cannot store). */
export interface LimitOptions {
  valueBytes?: number;
  commitBytes?: number;
}

function lowered(name: string, given: number | undefined, ceiling: number): number {
  if (given === undefined) return ceiling;
  if (!Number.isSafeInteger(given) || given < 64 || given > ceiling)
    throw new TypeError(
      `limits.${name} must be an integer from 64 to ${ceiling} (the default: a larger value would not be stored by every backend), got ${String(given)}`,
    );
  return given;
}

/** Validates the session option: each limit may only be lowered; a commit holds at least one value. */
export function valueLimits(options: LimitOptions | undefined): ValueLimits {
  if (options === undefined) return DEFAULT_LIMITS;
  if (typeof options !== "object" || options === null)
    throw new TypeError("limits must be an object { valueBytes?, commitBytes? }");
  const valueBytes = lowered("valueBytes", options.valueBytes, MAX_VALUE_BYTES);
  const commitBytes = lowered(
    "commitBytes",
    options.commitBytes ?? Math.min(MAX_COMMIT_BYTES, valueBytes * 2),
    MAX_COMMIT_BYTES,
  );
  if (commitBytes < valueBytes)
    throw new TypeError(
      `limits.commitBytes (${commitBytes}) must be at least limits.valueBytes (${valueBytes})`,
    );
  return Object.freeze({ valueBytes, commitBytes });
}

/**
 * The size to count for `value`, just returned by a `copyJson` call (its
 * bound is read from that walk): throws a TypeError naming `where` when the
 * value is over the limit.
 */
export function copiedSize(value: Json, limits: ValueLimits, where: string): number {
  return checkedSize(value, copiedBound(), limits.valueBytes, where);
}

/** The size to count for a value not measured by a copy (a document's whole value, a string assigned in a draft). */
export function measuredSize(value: Json, limits: ValueLimits, where: string): number {
  return checkedSize(value, jsonBound(value), limits.valueBytes, where);
}

/** The values a write carries, for the exact count of a commit near its limit. */
function writeBytes(write: StorageWrite): number {
  switch (write.type) {
    case "conversation":
    case "entry":
    case "task":
    case "submission":
      return jsonBytes(write.value as unknown as Json);
    case "document.create":
    case "document.change":
      return jsonBytes(write.content as unknown as Json);
    default:
      return 0;
  }
}

/**
 * A commit over the session's `commitBytes`: a `TypeError` like every size
 * refusal, of its own class so a caller that chose to write more in one
 * commit (the scheduler's abort of a task tree) can fall back to smaller ones.
 */
export class CommitTooLarge extends TypeError {}

/**
 * The size to count for a whole commit whose summed bound is `bound`: the
 * bound when it is within the limit, else the exact sum of its writes,
 * which must be within the limit too.
 */
export function commitSize(
  writes: readonly StorageWrite[],
  bound: number,
  limits: ValueLimits,
): number {
  if (bound <= limits.commitBytes) return bound;
  let exact = 0;
  for (const write of writes) exact += writeBytes(write);
  if (exact > limits.commitBytes)
    throw new CommitTooLarge(
      `commit: its writes hold ${exact} bytes of JSON text, over the limit of ${limits.commitBytes} bytes per commit`,
    );
  return exact;
}
