import { copyJson, type Json } from "../domain/json.js";
import type { TaskId } from "../domain/ids.js";
import type { TaskOutcome, TaskState } from "../domain/records.js";
import { checkCheckpoint } from "./define-task.js";

const OWN_OUTCOMES = new Set(["completed", "failed", "aborted"]);

/** What a phase asked for: a new running/waiting state, or to finish with an outcome. */
export type Requested =
  { finish: false; state: TaskState } | { finish: true; outcome: TaskOutcome };

function checkOutcome(name: string, value: unknown): TaskOutcome {
  const outcome = copyJson(value, "outcome") as Record<string, Json>;
  if (typeof outcome !== "object" || outcome === null || Array.isArray(outcome))
    throw new TypeError(`task "${name}": outcome must be an object with a kind`);
  if (!OWN_OUTCOMES.has(outcome.kind as string))
    throw new TypeError(
      `task "${name}": outcome.kind must be "completed", "failed" or "aborted", got ${JSON.stringify(outcome.kind)}`,
    );
  if (outcome.kind === "failed") {
    const error = outcome.error as Record<string, Json> | undefined;
    if (
      typeof error !== "object" ||
      error === null ||
      typeof error.name !== "string" ||
      typeof error.message !== "string"
    )
      throw new TypeError(
        `task "${name}": outcome.error must be { name, message, code? } (errorInfo(error) builds one)`,
      );
  }
  if (
    outcome.kind === "aborted" &&
    outcome.reason !== undefined &&
    typeof outcome.reason !== "string"
  )
    throw new TypeError(`task "${name}": outcome.reason must be a string`);
  return outcome as unknown as TaskOutcome;
}

/**
 * Reads what an `rt.commit` callback returned: a checkpoint, a
 * whole state, or `undefined` (no state change). Throws a `TypeError` naming
 * the field at fault, so the commit is discarded.
 */
export function interpretNext(
  definition: { name: string; phases: object },
  self: TaskId,
  next: unknown,
): Requested | undefined {
  if (next === undefined) return undefined;
  const name = definition.name;
  if (typeof next !== "object" || next === null || Array.isArray(next))
    throw new TypeError(`task "${name}": rt.commit must return a checkpoint, a state or undefined`);
  if (!("status" in next)) {
    const checkpoint = copyJson(next, "checkpoint");
    checkCheckpoint(definition, checkpoint, "checkpoint");
    return { finish: false, state: { status: "running", checkpoint } };
  }
  if ("phase" in next)
    throw new TypeError(
      `task "${name}": the returned value has both "status" and "phase"; return a checkpoint or a state`,
    );
  const state = next as {
    status: unknown;
    checkpoint?: unknown;
    on?: unknown;
    policy?: unknown;
    outcome?: unknown;
  };
  switch (state.status) {
    case "running": {
      const checkpoint = copyJson(state.checkpoint, "state.checkpoint");
      checkCheckpoint(definition, checkpoint, "state.checkpoint");
      return {
        finish: false,
        state: { status: "running", checkpoint },
      };
    }
    case "waiting": {
      const checkpoint = copyJson(state.checkpoint, "state.checkpoint");
      checkCheckpoint(definition, checkpoint, "state.checkpoint");
      const on = state.on;
      // An empty list is allowed (a fan-out over nothing): the wait is settled at once.
      if (!Array.isArray(on) || !on.every((id) => Number.isSafeInteger(id) && (id as number) > 0))
        throw new TypeError(`task "${name}": state.on must be an array of task ids`);
      if (on.includes(self))
        throw new TypeError(`task "${name}": a task cannot wait on itself (task ${self})`);
      if (state.policy !== "allSettled" && state.policy !== "failFast")
        throw new TypeError(`task "${name}": state.policy must be "allSettled" or "failFast"`);
      return {
        finish: false,
        state: {
          status: "waiting",
          checkpoint,
          on: [...new Set(on as TaskId[])],
          policy: state.policy,
        },
      };
    }
    case "terminal":
    case "completing":
      return { finish: true, outcome: checkOutcome(name, state.outcome) };
    default:
      throw new TypeError(
        `task "${name}": state.status must be "running", "waiting", "completing" or "terminal", got ${JSON.stringify(state.status)}`,
      );
  }
}
