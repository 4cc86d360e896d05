import { fork } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { FAULT_CHILD_CONFIG_ENV, isFaultChildMessage } from "./fault-protocol.js";
import type { FaultChildConfig, FaultChildMessage } from "./fault-protocol.js";
import type { BatchTag } from "./observed-storage.js";
import type { Ack } from "./protocol.js";

const STDERR_TAIL = 8_000;

/** One step commit the child tried, and what the writer got. */
export type AttemptOutcome =
  | {
      attempt: number;
      step: number;
      outcome: "acknowledged";
      entryId: number;
      seq: number | undefined;
    }
  | {
      attempt: number;
      step: number;
      outcome: "rejected";
      error: string;
      announced: boolean;
      sessionFailed: boolean;
    };

/** Everything one fault child reported, and how it ended. */
export interface FaultChildReport {
  pid: number | undefined;
  /** Set once the child's Session is open. */
  nextStep: number | undefined;
  openError: string | undefined;
  attempts: AttemptOutcome[];
  intents: BatchTag[];
  /** `undefined` until the child reports its close; then the close error, or `null` for a clean close. */
  closeError: string | null | undefined;
  unhandled: string[];
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The child did not finish in time and was killed. */
  hung: boolean;
  stderr: string;
}

/** Acknowledged attempts in the shape the crash ledger reads. */
export function acksOf(report: FaultChildReport): Ack[] {
  return report.attempts.flatMap((attempt) =>
    attempt.outcome === "acknowledged"
      ? [{ committer: 0, step: attempt.step, entryId: attempt.entryId, seq: attempt.seq }]
      : [],
  );
}

function runnerPath(): string {
  const here = fileURLToPath(import.meta.url);
  const extension = here.endsWith(".ts") ? ".ts" : ".js";
  const runner = fileURLToPath(new URL(`./fault-child-runner${extension}`, import.meta.url));
  if (!existsSync(runner))
    throw new Error(`crash suite: fault child runner not found at ${runner}`);
  return runner;
}

export interface FaultLaunch {
  strace: string;
  /** strace's options, up to (not including) the traced command. */
  straceArgs: readonly string[];
  nodeArgs: readonly string[];
  config: FaultChildConfig;
  /** Open descriptor of the marker file; the child inherits it as fd 4. */
  markerFd: number;
  timeoutMs: number;
}

function record(report: FaultChildReport, message: FaultChildMessage): void {
  switch (message.type) {
    case "hello":
      report.pid = message.pid;
      return;
    case "opened":
      report.nextStep = message.nextStep;
      return;
    case "open-failed":
      report.openError = message.error;
      return;
    case "intent":
      report.intents.push(...message.batches);
      return;
    case "acknowledged":
      report.attempts.push({
        attempt: message.attempt,
        step: message.step,
        outcome: "acknowledged",
        entryId: message.entryId,
        seq: message.seq,
      });
      return;
    case "rejected":
      report.attempts.push({
        attempt: message.attempt,
        step: message.step,
        outcome: "rejected",
        error: message.error,
        announced: message.announced,
        sessionFailed: message.sessionFailed,
      });
      return;
    case "closed":
      report.closeError = message.error ?? null;
      return;
    case "unhandled":
      report.unhandled.push(message.error);
      return;
  }
}

/**
 * Runs the fault child under strace (`strace <args> -- node <nodeArgs>
 * runner`) until it exits on its own; kills it (and strace) after
 * `timeoutMs`. The libuv pool gets one thread, so strace's per-thread call
 * count (`when=`) names the same call in every run.
 */
export function runFaultChild(launch: FaultLaunch): Promise<FaultChildReport> {
  const report: FaultChildReport = {
    pid: undefined,
    nextStep: undefined,
    openError: undefined,
    attempts: [],
    intents: [],
    closeError: undefined,
    unhandled: [],
    exit: undefined,
    hung: false,
    stderr: "",
  };
  const child = fork(runnerPath(), [], {
    execPath: launch.strace,
    execArgv: [...launch.straceArgs, "--", process.execPath, ...launch.nodeArgs],
    env: {
      ...process.env,
      UV_THREADPOOL_SIZE: "1",
      [FAULT_CHILD_CONFIG_ENV]: JSON.stringify(launch.config),
    },
    stdio: ["ignore", "ignore", "pipe", "ipc", launch.markerFd],
    serialization: "json",
  });
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    report.stderr = (report.stderr + chunk).slice(-STDERR_TAIL);
  });
  child.on("message", (message: unknown) => {
    if (isFaultChildMessage(message)) record(report, message);
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      report.hung = true;
      // The traced node first: killing strace alone may leave it stopped.
      if (report.pid !== undefined) {
        try {
          process.kill(report.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      child.kill("SIGKILL");
    }, launch.timeoutMs);
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(report);
    };
    child.on("error", (error) => {
      report.stderr += `\ncould not start ${launch.strace}: ${error.message}`;
      finish();
    });
    // "close", not "exit": it comes after the IPC channel and stderr are drained, so no message is missed.
    child.on("close", (code, signal) => {
      report.exit = { code, signal };
      finish();
    });
  });
}
