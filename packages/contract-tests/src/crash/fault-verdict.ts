import { CrashCheckFailed } from "./failure.js";
import type { FaultChildReport } from "./fault-child-process.js";
import type { FaultFamily } from "./fault-families.js";
import { describePhase } from "./strace-log.js";
import type { PlacedCall } from "./strace-log.js";

const RULE = "a failed syscall reaches the writer";

/** `pwrite64 on storage-wal during commit attempt 2, returning -1 EIO ...`: a failed call as the messages name it. */
export function describeCall(call: PlacedCall, root: string): string {
  const own = call.paths.find((path) => path.startsWith(`${root}/`));
  const file = own === undefined ? "?" : own.slice(root.length + 1);
  return `${call.syscall} on ${file} ${describePhase(call.phase)}, returning ${call.result || "nothing (the process ended in it)"}`;
}

/** The child ended as it should: on its own, with exit code 0, every error handled. */
export function checkChildEnded(
  report: FaultChildReport,
  injected: readonly PlacedCall[],
  root: string,
): void {
  const what =
    injected.length === 0
      ? "no fault was injected"
      : `after ${injected.map((call) => describeCall(call, root)).join("; ")}`;
  if (report.hung)
    throw new CrashCheckFailed(
      RULE,
      `the writer hung (${what}): it neither finished nor failed in time; child stderr:\n${report.stderr}`,
    );
  if (report.unhandled.length > 0)
    throw new CrashCheckFailed(
      RULE,
      `${what}, the process got an unhandled rejection (an error no caller could see): ${report.unhandled.join("; ")}`,
    );
  if (report.exit?.code !== 0 || report.closeError === undefined)
    throw new CrashCheckFailed(
      RULE,
      `${what}, the writer's process died (exit ${JSON.stringify(report.exit)}) instead of reporting the error to the caller; child stderr:\n${report.stderr}`,
    );
}

/** Why the writer need not hear of this failed call, or `undefined` when it must. */
export function whyMayFailQuietly(family: FaultFamily, call: PlacedCall): string | undefined {
  if (!family.mustReport) return `a failed ${family.name} may be ignored`;
  return family.quietlyFailing?.(call.text);
}

/**
 * Where an injected failure must surface: a failure in a commit rejects that
 * commit (it is never acknowledged); one in open rejects the open; one in
 * close rejects the close; one between operations (a background thread)
 * rejects the next operation.
 */
export function checkFaultReported(
  family: FaultFamily,
  call: PlacedCall,
  report: FaultChildReport,
  root: string,
): void {
  if (whyMayFailQuietly(family, call) !== undefined) return;
  const failed = describeCall(call, root);
  const attempt = (n: number) => report.attempts.find((a) => a.attempt === n);
  const phase = call.phase;
  switch (phase.kind) {
    case "open":
      if (report.openError === undefined)
        throw new CrashCheckFailed(
          RULE,
          `${failed}, but the open resolved: the writer got no error`,
        );
      return;
    case "commit": {
      const outcome = attempt(phase.attempt);
      if (outcome?.outcome === "acknowledged")
        throw new CrashCheckFailed(
          RULE,
          `${failed}, but that commit (step ${outcome.step}) was acknowledged with entry ${outcome.entryId}${outcome.seq === undefined ? "" : `, seq ${outcome.seq}`}: the writer got no error`,
        );
      if (outcome === undefined)
        throw new CrashCheckFailed(
          "harness",
          `${failed}, but the child reported no outcome for attempt ${phase.attempt}`,
        );
      return;
    }
    case "between": {
      // After a failed open the writer already has its error.
      if (phase.after === 0 && report.openError !== undefined) return;
      const next = attempt(phase.after + 1);
      if (next?.outcome === "acknowledged")
        throw new CrashCheckFailed(
          RULE,
          `${failed}, and the next commit (step ${next.step}) was acknowledged with entry ${next.entryId}: the failure never reached the writer`,
        );
      if (next === undefined && report.closeError === null)
        throw new CrashCheckFailed(
          RULE,
          `${failed}, and the close that followed resolved: the failure never reached the writer`,
        );
      return;
    }
    case "close":
      if (report.closeError === null)
        throw new CrashCheckFailed(RULE, `${failed}, but close resolved: the writer got no error`);
      return;
    case "starting":
    case "exiting":
      throw new CrashCheckFailed(
        "harness",
        `${failed}: the backend touched its files outside open, commit and close, where the suite cannot tell who should get the error`,
      );
  }
}
