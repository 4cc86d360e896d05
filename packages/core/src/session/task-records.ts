import type { TaskRecord } from "../domain/records.js";
import type { TaskQuery } from "../storage/port.js";

const STATUSES = new Set(["pending", "running", "waiting", "completing", "terminal"]);

export function isTerminal(task: TaskRecord): boolean {
  return task.state.status === "terminal";
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
