import { CrashCheckFailed } from "./failure.js";
import { FAULT_SYSCALLS } from "./fault-families.js";
import { prepareStorage, runTraced } from "./fault-traced-run.js";
import type { TracedRun } from "./fault-traced-run.js";
import {
  declaredPaths,
  fromRelative,
  isOwn,
  toRelative,
  withFaultWorkspace,
} from "./fault-workspace.js";
import type { FaultWorkspace } from "./fault-workspace.js";
import type { Phase, PlacedCall } from "./strace-log.js";
import type { StraceSupport } from "./strace-support.js";
import type { CrashConformanceOptions, SyscallFaultOptions } from "./types.js";

/** One call of the fault-free run on the backend's files: a place a fault can be injected. */
export interface CalibratedCall {
  syscall: string;
  /** strace's `when=`: this is the n-th call of `syscall` on the traced files in its thread. */
  when: number;
  /** Threads numbered in order of their first call on the backend's files, from 1. */
  thread: number;
  phase: Phase;
  /** The file, relative to the run's directory (`storage/main.jsonl`). */
  file: string;
}

export interface Calibration {
  /**
   * The backend's files, relative to a run's directory: the declared paths
   * plus every file under a declared directory that both fault-free runs
   * touched. Files with a name that changes from run to run (a random
   * temporary name) are not among them: strace could not aim at them.
   */
  files: string[];
  /** Files only one run touched (left out of `files`). */
  unstable: string[];
  /** The second run's calls on `files`, in order. */
  calls: CalibratedCall[];
  /** Calls per syscall in each run; a difference means `when=` may miss. */
  counts: { first: Record<string, number>; second: Record<string, number> };
  /** Wall time of one traced child run (the second). */
  runMs: number;
}

function ownFilesOf(
  run: TracedRun,
  declared: readonly string[],
  options: SyscallFaultOptions,
  workspace: FaultWorkspace,
): Set<string> {
  const files = new Set<string>();
  for (const call of run.calls)
    for (const path of call.paths)
      if (isOwn(path, declared, options, workspace)) files.add(toRelative(workspace, path));
  return files;
}

function checkRun(run: TracedRun, which: string): void {
  const { report } = run;
  const failures = [
    report.hung ? "it did not finish in time" : undefined,
    report.exit?.code !== 0 ? `it exited with ${JSON.stringify(report.exit)}` : undefined,
    report.openError !== undefined ? `open failed: ${report.openError}` : undefined,
    ...report.attempts.map((attempt) =>
      attempt.outcome === "rejected"
        ? `commit attempt ${attempt.attempt} was rejected: ${attempt.error}`
        : undefined,
    ),
    report.closeError !== null
      ? `close ${report.closeError === undefined ? "was not reported" : `failed: ${report.closeError}`}`
      : undefined,
    ...report.unhandled.map((error) => `unhandled rejection: ${error}`),
  ].filter((text): text is string => text !== undefined);
  if (failures.length > 0)
    throw new CrashCheckFailed(
      "harness",
      `the ${which} fault-free run under strace did not go cleanly: ${failures.join("; ")}; child stderr:\n${report.stderr}`,
    );
  if (run.markers.at(-1) !== "c")
    throw new CrashCheckFailed(
      "harness",
      `the ${which} fault-free run's strace log holds markers ${JSON.stringify(run.markers)}, expected them to end with "c" (close done)`,
    );
}

async function faultFreeRun(
  options: CrashConformanceOptions,
  faults: SyscallFaultOptions,
  support: Extract<StraceSupport, { usable: true }>,
  which: string,
): Promise<{ run: TracedRun; own: Set<string>; workspace: FaultWorkspace; declared: string[] }> {
  return withFaultWorkspace(async (workspace) => {
    const ledger = await prepareStorage(options, workspace.path);
    const run = await runTraced(
      options,
      support,
      workspace,
      ledger,
      { syscalls: FAULT_SYSCALLS },
      "write",
    );
    checkRun(run, which);
    const declared = declaredPaths(faults, workspace);
    return { run, own: ownFilesOf(run, declared, faults, workspace), workspace, declared };
  });
}

function countBySyscall(calls: readonly CalibratedCall[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const call of calls) counts[call.syscall] = (counts[call.syscall] ?? 0) + 1;
  return counts;
}

/** The calls strace will count once `-P` names exactly `files` (any path of the call matching). */
function numberCalls(
  calls: readonly PlacedCall[],
  files: ReadonlySet<string>,
  workspace: FaultWorkspace,
): CalibratedCall[] {
  const threads = new Map<number, number>();
  const perThread = new Map<string, number>();
  const out: CalibratedCall[] = [];
  for (const call of calls) {
    const file = call.paths
      .map((path) => toRelative(workspace, path))
      .find((path) => files.has(path));
    if (file === undefined) continue;
    if (!threads.has(call.tid)) threads.set(call.tid, threads.size + 1);
    const key = `${call.tid}/${call.syscall}`;
    const when = (perThread.get(key) ?? 0) + 1;
    perThread.set(key, when);
    out.push({
      syscall: call.syscall,
      when,
      thread: threads.get(call.tid) ?? 0,
      phase: call.phase,
      file,
    });
  }
  return out;
}

/**
 * Two fault-free runs of the same workload under strace, tracing every
 * syscall the scenarios can fail, on fresh storages laid out alike: which
 * files the backend touches and, per syscall, which calls there are to aim
 * at.
 */
export async function calibrate(
  options: CrashConformanceOptions,
  faults: SyscallFaultOptions,
  support: Extract<StraceSupport, { usable: true }>,
): Promise<Calibration> {
  const first = await faultFreeRun(options, faults, support, "first");
  const second = await faultFreeRun(options, faults, support, "second");
  const files = new Set<string>();
  for (const declared of second.declared) files.add(toRelative(second.workspace, declared));
  for (const file of second.own) if (first.own.has(file)) files.add(file);
  const unstable = [...new Set([...first.own, ...second.own])].filter((file) => !files.has(file));
  const firstCalls = numberCalls(first.run.calls, files, first.workspace);
  const calls = numberCalls(second.run.calls, files, second.workspace);
  return {
    files: [...files].sort(),
    unstable: unstable.sort(),
    calls,
    counts: { first: countBySyscall(firstCalls), second: countBySyscall(calls) },
    runMs: second.run.elapsedMs,
  };
}

/** The `-P` list of a fault run in `workspace`: the calibrated files, plus the marker file so markers are logged. */
export function tracedPaths(calibration: Calibration, workspace: FaultWorkspace): string[] {
  return [...calibration.files.map((file) => fromRelative(workspace, file)), workspace.markerPath];
}
