import type { Session, Storage, Scheduler } from "@durably/core";
import type { Check } from "../storage/support.js";

/** The task rule groups of the conformance suite. */
export type TaskRule =
  "lifecycle" | "waiting" | "wait cycles" | "abort and completing" | "blocked tasks" | "recovery";

export interface TaskScenarioContext {
  readonly check: Check;
  /** Opens a Session and a started Scheduler over the current storage (the session owns it). */
  readonly open: () => Promise<{ session: Session; scheduler: Scheduler }>;
  /** Persistent adapters: closes the current instance and opens the same data again; undefined otherwise. */
  readonly reopen: (() => Promise<Storage>) | undefined;
}

export interface TaskScenario {
  readonly name: string;
  run(context: TaskScenarioContext): Promise<void>;
}

export interface TaskRuleGroup {
  readonly rule: TaskRule;
  readonly scenarios: readonly TaskScenario[];
}

export function taskScenario(
  name: string,
  run: (context: TaskScenarioContext) => Promise<void>,
): TaskScenario {
  return { name, run };
}
