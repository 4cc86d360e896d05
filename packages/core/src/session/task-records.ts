import {
  checkJson,
  formatPath,
  MAX_JSON_DEPTH,
  type Json,
  type JsonObject,
} from "../domain/json.js";
import { ValueTooLarge } from "../domain/errors.js";
import { copyJsonMeasured, NestingTooDeep } from "../domain/json-copy.js";
import { checkTextBytes, jsonBytes, MAX_KIND_BYTES } from "../domain/json-size.js";
import type { ValueLimits } from "./value-size.js";
import type { TaskRecord } from "../domain/records.js";
import type { TaskQuery } from "../storage/port.js";

const STATUSES = new Set(["pending", "running", "waiting", "completing", "terminal"]);

export function isTerminal(task: TaskRecord): boolean {
  return task.state.status === "terminal";
}

/** A memo's value sits three levels below the record (task, memos, the memo's entry). */
const MEMO_VALUE_LEVELS = 3;
const VALUE = { depth: 0 } as const;

/**
 * Copies a whole task record (strict JSON, -0 as 0). Its values (input,
 * checkpoint, outcome, each memo's fields, any other field) may each nest
 * 256 levels, so the record itself may nest deeper. One walk does it: the
 * record is copied with room for the deepest-placed value, and only a record
 * deeper than the shallowest-placed value allows is checked field by field.
 */
export function copyTaskRecord(record: unknown): { record: TaskRecord; bound: number } {
  let copied: { value: Json; deepest: number; bound: number };
  try {
    copied = copyJsonMeasured(record, "task", { depth: -MEMO_VALUE_LEVELS });
  } catch (error) {
    // Too deep even for a memo value: name the first level beyond the limit of the value at fault.
    if (error instanceof NestingTooDeep && typeof record === "object" && record !== null)
      checkTaskValues(record as JsonObject);
    throw error;
  }
  const { value, deepest, bound } = copied;
  // A top-level field starts at level 2: a record no deeper than that allows holds no value too deep.
  if (deepest > 1 + MAX_JSON_DEPTH && typeof value === "object" && value !== null)
    checkTaskValues(value as JsonObject);
  return { record: value as unknown as TaskRecord, bound };
}

/**
 * The size to count for a copied task record (one stored value: input,
 * checkpoint, outcome and memos together) whose copy bound is `bound`. Over
 * the limit, the TypeError names the record's largest part.
 */
export function taskSize(task: TaskRecord, bound: number, limits: ValueLimits): number {
  if (bound <= limits.valueBytes) return bound;
  const exact = jsonBytes(task as unknown as Json);
  if (exact <= limits.valueBytes) return exact;
  let largest = { path: "task", bytes: 0 };
  const consider = (holder: Json | undefined, root: string): void => {
    if (typeof holder !== "object" || holder === null || Array.isArray(holder)) return;
    for (const key of Object.keys(holder)) {
      const bytes = jsonBytes(holder[key] as Json);
      if (bytes > largest.bytes) largest = { path: formatPath(root, [key]), bytes };
    }
  };
  const record = task as unknown as JsonObject;
  consider({ ...record, state: null, memos: null }, "task");
  consider(record.state, "task.state");
  consider(record.memos, "task.memos");
  throw new ValueTooLarge(
    `${largest.path}: task ${task.id} would hold ${exact} bytes of JSON text, over the limit of ${limits.valueBytes} bytes per value (this part is ${largest.bytes} bytes)`,
    "task",
    exact,
    limits.valueBytes,
  );
}

/** Every value in a copied task record, each counted from where it starts. */
function checkTaskValues(task: JsonObject): void {
  const fields = (holder: Json | undefined, root: string, skip: readonly string[] = []): void => {
    if (typeof holder !== "object" || holder === null || Array.isArray(holder)) {
      checkJson(holder, root, VALUE);
      return;
    }
    for (const key of Object.keys(holder))
      if (!skip.includes(key)) checkJson(holder[key], formatPath(root, [key]), VALUE);
  };
  fields(task, "task", ["state", "memos"]);
  if (task.state !== undefined) fields(task.state, "task.state");
  const memos = task.memos;
  if (typeof memos === "object" && memos !== null && !Array.isArray(memos)) {
    for (const key of Object.keys(memos)) fields(memos[key], formatPath("task.memos", [key]));
  } else if (memos !== undefined) checkJson(memos, "task.memos", VALUE);
}

/** The shape checks of a whole task replacement, naming the field at fault. */
export function checkTaskRecord(task: TaskRecord): void {
  const t = task as unknown as Record<string, unknown>;
  const positive = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) > 0;
  if (!positive(t.id)) throw new TypeError(`task.id: must be a positive integer id`);
  if (!positive(t.conversationId))
    throw new TypeError(`task.conversationId: must be a positive integer id`);
  if (typeof t.kind !== "string" || t.kind === "")
    throw new TypeError(`task.kind: must be a non-empty string`);
  checkTextBytes(t.kind, MAX_KIND_BYTES, "task.kind");
  if (!positive(t.version)) throw new TypeError(`task.version: must be a positive integer`);
  if (!("input" in t)) throw new TypeError(`task.input: missing`);
  if (typeof t.background !== "boolean") throw new TypeError(`task.background: must be a boolean`);
  if (typeof t.abortRequested !== "boolean")
    throw new TypeError(`task.abortRequested: must be a boolean`);
  if (t.owner !== undefined && !positive(t.owner))
    throw new TypeError(`task.owner: must be a task id`);
  const state = t.state as Record<string, unknown> | undefined;
  if (typeof state !== "object" || state === null || !STATUSES.has(state.status as string))
    throw new TypeError(`task.state.status: must be one of ${[...STATUSES].join(", ")}`);
  switch (state.status) {
    case "pending":
    case "running":
      if (!("checkpoint" in state))
        throw new TypeError(`task.state.checkpoint: missing for status ${String(state.status)}`);
      break;
    case "waiting":
      if (!("checkpoint" in state))
        throw new TypeError(`task.state.checkpoint: missing for status waiting`);
      if (!Array.isArray(state.on) || !state.on.every(positive))
        throw new TypeError(`task.state.on: must be an array of task ids`);
      if (state.policy !== "failFast" && state.policy !== "allSettled")
        throw new TypeError(`task.state.policy: must be "failFast" or "allSettled"`);
      break;
    default: {
      const outcome = state.outcome as Record<string, unknown> | undefined;
      if (typeof outcome !== "object" || outcome === null || typeof outcome.kind !== "string")
        throw new TypeError(`task.state.outcome: missing for status ${String(state.status)}`);
    }
  }
}

/** The equality filters of `scanTasks`, applied to a task of the overlay. */
export function matchesTaskQuery(task: TaskRecord, query: TaskQuery): boolean {
  if (typeof query !== "object" || query === null) return false;
  return (
    (query.conversationId === undefined || task.conversationId === query.conversationId) &&
    (query.kind === undefined || task.kind === query.kind) &&
    (query.status === undefined || task.state.status === query.status) &&
    (query.abortRequested === undefined || task.abortRequested === query.abortRequested) &&
    (query.background === undefined || task.background === query.background) &&
    (query.owner === undefined || task.owner === query.owner)
  );
}
