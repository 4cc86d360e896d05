import type { Reopen } from "../storage/api.js";
import type { Check } from "../storage/support.js";
import type { FaultInjector } from "./faults.js";

/** The session-level rule groups of the conformance suite. */
export type SessionRule =
  | "atomic commits"
  | "operation failures"
  | "value limits"
  | "large values"
  | "storage failure"
  | "read failures"
  | "group commit"
  | "documents"
  | "deferred progress"
  | "index limits";

export interface SessionScenarioContext {
  /** The adapter under test, wrapped so a scenario can inject a fault through the port. */
  readonly storage: FaultInjector;
  readonly check: Check;
  /** The factory's `reopen` (persistent adapters): closes the storage and opens its data again. */
  readonly reopen?: Reopen;
}

export interface SessionScenario {
  readonly name: string;
  run(context: SessionScenarioContext): Promise<void>;
  /** For the few scenarios that move hundreds of megabytes: the runner's timeout for this one. */
  readonly timeoutMs?: number;
}

export interface SessionRuleGroup {
  readonly rule: SessionRule;
  readonly scenarios: readonly SessionScenario[];
}

export function sessionScenario(
  name: string,
  run: (context: SessionScenarioContext) => Promise<void>,
  timeoutMs?: number,
): SessionScenario {
  return timeoutMs === undefined ? { name, run } : { name, run, timeoutMs };
}
