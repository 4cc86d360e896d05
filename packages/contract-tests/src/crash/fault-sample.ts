import { CrashCheckFailed, describeError } from "./failure.js";
import { tracedPaths } from "./fault-calibration.js";
import type { CalibratedCall, Calibration } from "./fault-calibration.js";
import { acksOf } from "./fault-child-process.js";
import type { FaultChildReport } from "./fault-child-process.js";
import type { FaultFamily } from "./fault-families.js";
import { prepareStorage, runTraced, verifyAfterFault } from "./fault-traced-run.js";
import {
  checkChildEnded,
  checkFaultReported,
  describeCall,
  whyMayFailQuietly,
} from "./fault-verdict.js";
import { keepWorkspaces, withFaultWorkspace } from "./fault-workspace.js";
import type { Prng } from "./prng.js";
import { describePhase } from "./strace-log.js";
import type { PlacedCall } from "./strace-log.js";
import type { StraceSupport } from "./strace-support.js";
import type { CrashConformanceOptions, FaultReplay } from "./types.js";

/** Calls of the backend shown before and after a failed one in a failure message. */
const CONTEXT_CALLS = 4;

/** One fault to inject: the calibrated call to aim at and the error it returns. */
export interface FaultPlan {
  family: FaultFamily;
  target: CalibratedCall;
  errno: string;
}

export interface FaultOutcome {
  plan: FaultPlan;
  /** The calls strace made fail (the aimed one, and the same call number in other threads). */
  injected: string[];
  /** What the writer was told, per operation that failed. */
  errors: string[];
  acknowledged: number;
  /** Why the writer need not have heard of the failure, when it may fail quietly. */
  quietly: string | undefined;
  /** A failed call was the aimed one (same syscall, file and phase as in the fault-free runs). */
  asAimed: boolean;
  elapsedMs: number;
}

/** How to replay a plan by hand, and where it aimed. */
export function describePlan(plan: FaultPlan): string {
  const { target } = plan;
  return `inject=${target.syscall}:error=${plan.errno}:when=${target.when} (aimed at call ${target.when} of ${target.syscall} in thread ${target.thread}, on ${target.file}, ${describePhase(target.phase)} in the fault-free runs)`;
}

export function pickPlan(
  family: FaultFamily,
  calibration: Calibration,
  prng: Prng,
): FaultPlan | undefined {
  const candidates = calibration.calls.filter((call) => family.syscalls.includes(call.syscall));
  if (candidates.length === 0) return undefined;
  const target = candidates[prng.int(0, candidates.length - 1)] as CalibratedCall;
  const errno = family.errnos[prng.int(0, family.errnos.length - 1)] as string;
  return { family, target, errno };
}

/** The plan of a replayed fault: the calibrated call it names, so messages say where it lands. */
export function replayPlan(
  family: FaultFamily,
  calibration: Calibration,
  replay: FaultReplay,
): FaultPlan {
  const target = calibration.calls.find(
    (call) => call.syscall === replay.syscall && call.when === replay.when,
  );
  if (target === undefined)
    throw new CrashCheckFailed(
      "harness",
      `replay inject=${replay.syscall}:error=${replay.errno}:when=${replay.when} names no call of the fault-free runs (they make ${calibration.counts.second[replay.syscall] ?? 0} ${replay.syscall} calls on the backend's files per thread at most)`,
    );
  return { family, target, errno: replay.errno };
}

function errorsOf(report: FaultChildReport): string[] {
  const errors: string[] = [];
  if (report.openError !== undefined) errors.push(`open: ${report.openError}`);
  for (const attempt of report.attempts)
    if (attempt.outcome === "rejected")
      errors.push(`commit of step ${attempt.step}: ${attempt.error}`);
  if (typeof report.closeError === "string") errors.push(`close: ${report.closeError}`);
  return errors;
}

/** Runs `check`; a failure is kept so the other checks still run and every broken rule is reported. */
async function collect(
  failures: CrashCheckFailed[],
  check: () => Promise<void> | void,
): Promise<void> {
  try {
    await check();
  } catch (error) {
    failures.push(
      error instanceof CrashCheckFailed
        ? error
        : new CrashCheckFailed(
            "the storage keeps working after a crash",
            `reopen after the fault failed: ${describeError(error)}`,
            { cause: error },
          ),
    );
  }
}

/** The backend's calls around the failed one, as strace logged them. */
function excerpt(calls: readonly PlacedCall[], injected: readonly PlacedCall[]): string {
  const first = injected[0];
  if (first === undefined) return "";
  const at = calls.indexOf(first);
  const lines = calls
    .slice(Math.max(0, at - CONTEXT_CALLS), at + CONTEXT_CALLS + 1)
    .map((call) => `    ${call === first ? ">" : " "} ${call.text}`);
  return `\n  the backend's calls around it (strace):\n${lines.join("\n")}`;
}

/**
 * One fault: a fresh storage with two committed steps, the child under strace
 * with the injection, then the checks: a reopen without strace holds every
 * acknowledged commit, none half present, seqs and ids only growing, and
 * takes a new commit; and the writer got the error where the call failed.
 * Returns `undefined` when strace injected nothing (the aimed call did not
 * happen in this run); that run is still verified.
 */
export async function runFaultSample(
  options: CrashConformanceOptions,
  support: Extract<StraceSupport, { usable: true }>,
  calibration: Calibration,
  plan: FaultPlan,
): Promise<FaultOutcome | undefined> {
  return withFaultWorkspace(async (workspace) => {
    const ledger = await prepareStorage(options, workspace.path);
    const { syscall, when } = plan.target;
    const markerSyscall = syscall === "write" ? "pwrite64" : "write";
    const run = await runTraced(
      options,
      support,
      workspace,
      ledger,
      {
        syscalls: [syscall, markerSyscall],
        paths: tracedPaths(calibration, workspace),
        inject: { syscall, errno: plan.errno, when },
      },
      markerSyscall,
    );
    const injected = run.calls.filter((call) => call.injected);
    const acks = acksOf(run.report);
    // Lost or half-present data first: it is the worse news when both rules break.
    const failures: CrashCheckFailed[] = [];
    await collect(failures, () =>
      verifyAfterFault(options, workspace.path, ledger, run.report, acks),
    );
    await collect(failures, () => checkChildEnded(run.report, injected, workspace.root));
    for (const call of injected)
      await collect(failures, () =>
        checkFaultReported(plan.family, call, run.report, workspace.root),
      );
    const [first, ...more] = failures;
    if (first !== undefined) {
      const lines = [first.detail, ...more.map((failure) => `also ${failure.message}`)];
      if (injected.length > 0)
        lines.push(
          `the failed call: ${injected.map((call) => describeCall(call, workspace.root)).join("; ")}`,
        );
      lines.push(`what the writer got: ${errorsOf(run.report).join(" | ") || "no error"}`);
      if (keepWorkspaces()) lines.push(`run directory kept: ${workspace.root}`);
      throw new CrashCheckFailed(first.rule, lines.join("\n  ") + excerpt(run.calls, injected), {
        cause: first,
      });
    }
    if (injected.length === 0) return undefined;
    const aimed = plan.target;
    const asAimed = injected.some(
      (call) =>
        call.syscall === aimed.syscall &&
        call.paths.some((path) => path === `${workspace.root}/${aimed.file}`) &&
        JSON.stringify(call.phase) === JSON.stringify(aimed.phase),
    );
    const quiet = injected.map((call) => whyMayFailQuietly(plan.family, call));
    return {
      quietly: quiet.every((why) => why !== undefined) ? quiet[0] : undefined,
      asAimed,
      plan,
      injected: injected.map((call) => describeCall(call, workspace.root)),
      errors: errorsOf(run.report),
      acknowledged: acks.length,
      elapsedMs: run.elapsedMs,
    };
  });
}
