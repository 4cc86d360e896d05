import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Checks } from "../checks.js";
import { heading } from "../render/heading.js";
import type { Output } from "../render/output.js";
import { agentStep } from "./agent-step.js";
import type { TourContext, TourStep } from "./context.js";
import { experimentStep } from "./experiment-step.js";
import { throwingSaveStep, tornMarkerStep } from "./fault-steps.js";
import { storedStep } from "./stored-step.js";

/** The whole tour, in order. */
export const TOUR: readonly TourStep[] = [
  experimentStep,
  storedStep,
  throwingSaveStep,
  tornMarkerStep,
  agentStep,
];
/** The fault steps alone (`demo faults`). */
export const FAULTS: readonly TourStep[] = [throwingSaveStep, tornMarkerStep];
/** The scripted agent run alone (`demo agent`). */
export const AGENT: readonly TourStep[] = [agentStep];

/**
 * Runs steps in a fresh temporary directory (removed afterwards unless
 * `keep`), then prints the verdict. Returns the exit code: 0 when every
 * claim held, 1 otherwise.
 */
export async function runSteps(
  out: Output,
  steps: readonly TourStep[],
  options: { keep: boolean },
): Promise<number> {
  const root = await mkdtemp(join(tmpdir(), "durably-demo-"));
  const checks = new Checks(out);
  const context: TourContext = { out, checks, root };
  try {
    for (const step of steps) {
      heading(out, step.title);
      await step.run(context);
    }
  } finally {
    if (options.keep) {
      out.line();
      out.line(
        `Kept the storage directories in ${root} (try: demo inspect ${join(root, "experiment", "jsonl")})`,
      );
    } else {
      await rm(root, { recursive: true, force: true });
    }
  }
  out.line();
  const { failed, passed } = checks;
  if (failed.length === 0) {
    out.line(out.style.green(out.style.bold(`All ${passed} claims checked and held.`)));
    return 0;
  }
  out.line(
    out.style.red(out.style.bold(`${failed.length} of ${passed + failed.length} claims failed:`)),
  );
  for (const claim of failed) out.line(out.style.red(`  ✗ ${claim}`));
  return 1;
}
