import type { TaskId } from "../domain/ids.js";
import { checkKeys } from "../domain/option-keys.js";
import type { AnyTaskDefinition } from "./define-task.js";

export interface SchedulerOptions {
  /** Most tasks run at once (phases and abort handlers). Default 32. */
  concurrency?: number;
  /**
   * Where errors go that no caller can receive: a transition commit that
   * rejects (e.g. an `onTerminal` hook throws), a phase that throws after its
   * task already finished. Default: console.error.
   */
  onError?: (error: unknown, taskId: TaskId | undefined) => void;
  /**
   * How long a phase or abort handler gets to return after its `rt.signal`
   * aborted (a stop, or an abort requested for its task) before the
   * scheduler gives up on it. Default 3,000 ms. The call keeps running in
   * memory, but its runtime is revoked: it can store nothing more. After a
   * stop, its task stays as stored (`running`) and resumes at the next
   * start; after an abort, the abort goes on (owned tasks, the abort
   * handler) as if the phase had returned.
   */
  stopGraceMs?: number;
}

/** What `stop()` resolves with. */
export interface SchedulerStopReport {
  /**
   * Tasks whose phase or abort handler did not return within `stopGraceMs`
   * of the stop: left as stored (they resume at the next start), ascending.
   */
  readonly notStopped: readonly TaskId[];
}

const DEFAULT_CONCURRENCY = 32;
const DEFAULT_STOP_GRACE_MS = 3_000;
const OPTION_FIELDS = ["concurrency", "onError", "stopGraceMs"];

/** A scheduler's definitions by name and its options with their defaults, each checked (a `TypeError` naming the bad one). */
export function checkSchedulerOptions(
  definitions: readonly AnyTaskDefinition[],
  options: SchedulerOptions,
): {
  definitions: Map<string, AnyTaskDefinition>;
  concurrency: number;
  stopGraceMs: number;
  onError: (error: unknown, taskId: TaskId | undefined) => void;
} {
  const given: unknown = definitions;
  if (!Array.isArray(given))
    throw new TypeError("Scheduler: definitions must be an array of defineTask results");
  const byName = new Map<string, AnyTaskDefinition>();
  for (const definition of definitions) {
    if (typeof definition?.name !== "string" || typeof definition.phases !== "object")
      throw new TypeError("Scheduler: every definition must come from defineTask");
    if (byName.has(definition.name))
      throw new TypeError(`Scheduler: task "${definition.name}" is registered twice`);
    byName.set(definition.name, definition);
  }
  checkKeys(options, OPTION_FIELDS, "Scheduler", { what: "a scheduler option" });
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new TypeError(`Scheduler: concurrency must be a positive integer, got ${concurrency}`);
  const stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  if (!(stopGraceMs >= 0) || !Number.isFinite(stopGraceMs))
    throw new TypeError(
      `Scheduler: stopGraceMs must be a non-negative number of milliseconds, got ${String(stopGraceMs)}`,
    );
  const onError =
    options.onError ??
    ((error: unknown, taskId: TaskId | undefined) =>
      console.error(`durably scheduler${taskId === undefined ? "" : ` (task ${taskId})`}:`, error));
  return { definitions: byName, concurrency, stopGraceMs, onError };
}
