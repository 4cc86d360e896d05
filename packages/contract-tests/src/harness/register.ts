import type { StorageFactory } from "../storage/api.js";
import { runCrashScenario, type HarnessCrashOptions } from "./crash-scenarios.js";
import { harnessScenarios } from "./scenarios.js";
import { scriptedModels, type CrashScenario, type HarnessModelFactory } from "./scripts.js";

/** The injected runner; `it` takes a timeout as its third argument (Vitest, Jest). */
export interface HarnessTestApi {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void>, timeoutMs?: number): unknown;
}

export interface HarnessConformanceOptions {
  /** A fresh storage per scenario; persistent adapters pass `reopen` too. */
  factory: StorageFactory;
  /** The factory passes `reopen`: also run the scenarios that close and reopen. */
  persistent?: boolean;
  /** The SIGKILL scenarios (persistent backends): a child process runs the harness and is killed. */
  crash?: HarnessCrashOptions;
  /**
   * The model the scenarios run (default: ScriptedModel). A model adapter
   * passes a factory answering the same scripts through the adapter, and
   * `crash.modelModule` for the child, so every scenario runs through it.
   */
  models?: HarnessModelFactory;
}

const CRASHES: readonly { scenario: CrashScenario; name: string }[] = [
  {
    scenario: "stream",
    name: "killed while the model streams: partial text kept within the window, the rerun answers once",
  },
  {
    scenario: "safe-tool",
    name: 'killed during a replay: "safe" tool: the tool reruns and the run answers once',
  },
  {
    scenario: "unsafe-tool",
    name: "killed during an unsafe tool: it gets an interrupted result with its output so far, never a rerun",
  },
  {
    scenario: "retry-wait",
    name: "killed while waiting to retry a failed model call: the wait resumes, the run answers once, the failed attempt leaves no entry",
  },
  {
    scenario: "compaction",
    name: "killed while a compaction's summary streams: no marker is stored; on reopen it runs again and stores one whole summary",
  },
  {
    scenario: "tool-commit",
    name: "killed inside a tool's api.commit: none of that commit is stored; the rerun skips the recorded commit and memo and commits the rest once",
  },
  {
    scenario: "approval",
    name: "killed while a tool call waits for approval: it is still pending after reopening; approved then, it runs exactly once",
  },
  {
    scenario: "subagent",
    name: "killed while a tool's subagent answers: after reopening the tool finds the same subagent, which answers once, and the parent gets one answer",
  },
  {
    scenario: "approval-retry",
    name: "killed right after a call was approved with a requestId: the retried approval returns the stored decision and the tool runs exactly once",
  },
];

/**
 * Registers the harness conformance suite for one backend: runs through a
 * real Harness over the adapter, and, with `crash`, runs killed by SIGKILL
 * at the moments that matter (mid-stream, mid safe tool, mid unsafe tool,
 * mid retry wait, mid compaction summary, inside a tool's `api.commit`,
 * while a call waits for approval, right after it was approved)
 * and resumed on reopen.
 */
export function registerHarnessConformance(
  api: HarnessTestApi,
  name: string,
  options: HarnessConformanceOptions,
): void {
  const models = options.models ?? scriptedModels;
  api.describe(`${name} > harness`, () => {
    for (const scenario of harnessScenarios) {
      if (scenario.persistent && !options.persistent) continue;
      api.it(scenario.name, async () => {
        let ran = false;
        await options.factory(async (storage, reopen) => {
          ran = true;
          if (scenario.persistent && !reopen)
            throw new Error(
              `[harness] "${scenario.name}" needs reopen, but the factory did not pass it`,
            );
          await scenario.run(storage, reopen, models);
        });
        if (!ran)
          throw new Error(`[harness] the storage factory resolved without calling use(storage)`);
      });
    }
  });
  const crash = options.crash;
  if (!crash) return;
  api.describe(`${name} > harness crashes (SIGKILL)`, () => {
    for (const { scenario, name: title } of CRASHES)
      api.it(title, () => runCrashScenario(crash, scenario, models), 60_000);
  });
}
