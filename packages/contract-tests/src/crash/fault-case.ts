import { CrashCheckFailed, withReplay } from "./failure.js";
import type { Calibration } from "./fault-calibration.js";
import type { FaultFamily } from "./fault-families.js";
import { describePlan, pickPlan, replayPlan, runFaultSample } from "./fault-sample.js";
import type { FaultOutcome, FaultPlan } from "./fault-sample.js";
import type { Prng } from "./prng.js";
import type { StraceSupport } from "./strace-support.js";
import type { CrashConformanceOptions, FaultReplay } from "./types.js";

/** Tries per sampled fault when strace injects nothing (the aimed call did not happen in that run). */
export const TRIES = 3;

export interface FaultCase {
  family: FaultFamily;
  options: CrashConformanceOptions;
  support: Extract<StraceSupport, { usable: true }>;
  calibration: Calibration;
  prng: Prng;
  samples: number;
  replays: readonly FaultReplay[];
  seed: number;
}

export type FaultCaseResult =
  | { kind: "nothing-to-inject" }
  /** `failure`: every failed fault, combined; the caller reports the outcomes, then throws it. */
  | {
      kind: "done";
      outcomes: FaultOutcome[];
      missed: number;
      failure: CrashCheckFailed | undefined;
    };

async function runPlan(
  fault: FaultCase,
  plan: FaultPlan,
  which: string,
): Promise<FaultOutcome | undefined> {
  try {
    return await runFaultSample(fault.options, fault.support, fault.calibration, plan);
  } catch (error) {
    throw withReplay(
      error,
      `${which} (${fault.family.name}): ${describePlan(plan)}; replay with CRASH_SEED=${fault.seed}`,
    );
  }
}

/** Every failure of a case in one error: the first's rule, each one's message, so one bug does not hide another. */
function combined(failures: readonly CrashCheckFailed[], faults: number): CrashCheckFailed {
  const [first] = failures;
  if (first === undefined) throw new RangeError("no failures to combine");
  if (failures.length === 1) return first;
  const rest = failures.slice(1).map((failure) => failure.message);
  return new CrashCheckFailed(
    first.rule,
    `${first.detail}\n\n${failures.length} of ${faults} faults failed; the others:\n\n${rest.join("\n\n")}`,
    { cause: first },
  );
}

/**
 * One syscall group: `samples` faults drawn from the group's calibrated calls
 * (one that strace did not inject, because the aimed call did not happen, is
 * drawn again, up to `TRIES` times), then the replayed faults. Every fault
 * runs even after one failed; the failures come back combined.
 */
export async function runFaultCase(fault: FaultCase): Promise<FaultCaseResult> {
  const { family, calibration, prng, samples } = fault;
  const outcomes: FaultOutcome[] = [];
  const failures: CrashCheckFailed[] = [];
  const attempt = async (
    run: () => Promise<FaultOutcome | undefined>,
  ): Promise<FaultOutcome | "failed" | undefined> => {
    try {
      return await run();
    } catch (error) {
      failures.push(error instanceof CrashCheckFailed ? error : withReplay(error, family.name));
      return "failed";
    }
  };
  let missed = 0;
  const sampling = pickPlan(family, calibration, prng.fork("probe")) !== undefined;
  for (let sample = 1; sampling && sample <= samples; sample++) {
    let result: FaultOutcome | "failed" | undefined;
    for (let tries = 1; tries <= TRIES && result === undefined; tries++) {
      const plan = pickPlan(family, calibration, prng) as FaultPlan;
      result = await attempt(() => runPlan(fault, plan, `fault ${sample} of ${samples}`));
      if (result === undefined) missed++;
    }
    if (result === undefined)
      failures.push(
        new CrashCheckFailed(
          "harness",
          `${family.name}: strace injected nothing in ${TRIES} runs in a row; the backend's calls differ from its fault-free runs (seed ${fault.seed})`,
        ),
      );
    else if (result !== "failed") outcomes.push(result);
  }
  for (const replay of fault.replays) {
    const name = `replayed fault inject=${replay.syscall}:error=${replay.errno}:when=${replay.when}`;
    const result = await attempt(async () => {
      const plan = replayPlan(family, calibration, replay);
      const outcome = await runPlan(fault, plan, name);
      if (outcome === undefined)
        throw new CrashCheckFailed("harness", `${family.name}: the ${name} injected nothing`);
      return outcome;
    });
    if (result !== undefined && result !== "failed") outcomes.push(result);
  }
  if (!sampling && fault.replays.length === 0) return { kind: "nothing-to-inject" };
  const failure =
    failures.length === 0
      ? undefined
      : combined(failures, (sampling ? samples : 0) + fault.replays.length);
  return { kind: "done", outcomes, missed, failure };
}
