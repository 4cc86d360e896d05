import { closeSync, openSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Storage } from "@durably/core";
import { moduleUrl } from "./child-process.js";
import { runFaultChild } from "./fault-child-process.js";
import type { FaultChildReport } from "./fault-child-process.js";
import type { FaultWorkspace } from "./fault-workspace.js";
import { Ledger } from "./ledger.js";
import { commitOwnStep } from "./own-commit.js";
import type { Ack } from "./protocol.js";
import { straceArgs } from "./strace-command.js";
import type { TraceRequest } from "./strace-command.js";
import { parseStraceLog, placeCalls } from "./strace-log.js";
import type { PlacedCall } from "./strace-log.js";
import type { StraceSupport } from "./strace-support.js";
import type { CrashConformanceOptions } from "./types.js";
import { setUpCommitters } from "./workload.js";

/** Step commits the parent makes before the child starts, so the child's open has data to recover. */
const PARENT_STEPS = 2;
/** Step commits the child makes (fewer when one fails). */
export const CHILD_STEPS = 6;
/** A child that has not finished this long after its start is reported as hung. */
const CHILD_TIMEOUT_MS = 45_000;

/** The storage as the child finds it: committers set up, `PARENT_STEPS` steps committed, closed. */
export async function prepareStorage(
  options: CrashConformanceOptions,
  path: string,
): Promise<Ledger> {
  const ids = await setUpCommitters(await options.open(path), 1);
  const ledger = new Ledger(ids);
  const state = ledger.committers[0];
  if (state === undefined) throw new RangeError("no committer 0");
  for (let step = 1; step <= PARENT_STEPS; step++)
    ledger.adoptOwnCommit(await commitOwnStep(await options.open(path), state.ids, 0, step));
  return ledger;
}

export interface TracedRun {
  report: FaultChildReport;
  markers: string[];
  calls: PlacedCall[];
  elapsedMs: number;
}

/** Runs the fault child on the prepared storage under strace and reads its log. */
export async function runTraced(
  options: CrashConformanceOptions,
  support: Extract<StraceSupport, { usable: true }>,
  workspace: FaultWorkspace,
  ledger: Ledger,
  request: Omit<TraceRequest, "log">,
  markerSyscall: "write" | "pwrite64",
): Promise<TracedRun> {
  const committer = ledger.committers[0];
  if (committer === undefined) throw new RangeError("no committer 0");
  const markerFd = openSync(workspace.markerPath, "w");
  const started = Date.now();
  let report: FaultChildReport;
  try {
    report = await runFaultChild({
      strace: support.path,
      straceArgs: straceArgs(support, { ...request, log: workspace.log }),
      nodeArgs: options.nodeArgs ?? [],
      config: {
        childModule: moduleUrl(options.childModule),
        path: workspace.path,
        committer: committer.ids,
        steps: CHILD_STEPS,
        markerPath: workspace.markerPath,
        markerSyscall,
      },
      markerFd,
      timeoutMs: CHILD_TIMEOUT_MS,
    });
  } finally {
    closeSync(markerFd);
  }
  const elapsedMs = Date.now() - started;
  let log = "";
  try {
    log = await readFile(workspace.log, "utf8");
  } catch (error) {
    report.stderr += `\nno strace log at ${workspace.log}: ${String(error)}`;
  }
  return { report, ...placeCalls(parseStraceLog(log), workspace.markerPath), elapsedMs };
}

/** Reopens the storage without strace and checks it like the kill suite does after a kill. */
export async function verifyAfterFault(
  options: CrashConformanceOptions,
  path: string,
  ledger: Ledger,
  report: FaultChildReport,
  acks: readonly Ack[],
): Promise<void> {
  let storage: Storage | undefined = await options.open(path);
  try {
    await ledger.verify(storage, {
      acks,
      intents: report.intents,
      nextSteps: report.nextStep === undefined ? undefined : [report.nextStep],
    });
    const state = ledger.committers[0];
    if (state === undefined) throw new RangeError("no committer 0");
    const own = storage;
    storage = undefined; // commitOwnStep closes it
    ledger.adoptOwnCommit(await commitOwnStep(own, state.ids, 0, state.top.step + 1));
    storage = await options.open(path);
    await ledger.verifyWholeHistory(storage);
  } finally {
    await storage?.close();
  }
}
