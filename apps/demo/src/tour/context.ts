import type { Checks } from "../checks.js";
import type { Output } from "../render/output.js";
import type { BackendRun } from "../run-backends.js";

/** What the steps of a tour share: where to write, the claim ledger, a scratch directory, earlier results. */
export interface TourContext {
  readonly out: Output;
  readonly checks: Checks;
  /** A fresh directory owned by this run; each step works in its own subdirectory. */
  readonly root: string;
  /** Set by the experiment step; read by the step that shows what each backend stored. */
  experiment?: readonly BackendRun[];
}

/**
 * One step of the tour. Steps run in order; adding one (the scripted agent
 * run, when the harness lands) is one more entry in the tour's list.
 */
export interface TourStep {
  readonly title: string;
  run(context: TourContext): Promise<void>;
}
