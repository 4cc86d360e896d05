import { Harness, ROOT_CONVERSATION_ID, type Storage, type SubmissionRecord } from "@durably/core";
import { sleep, withTempStorage } from "../crash/temp-storage.js";
import { HarnessChild } from "./child-process.js";
import { checkAgentStored, isAgentCrash, resumeAgentCrash } from "./crash-agent.js";
import { checkApprovalStored, isApprovalCrash, resumeApprovalCrash } from "./approval-crash.js";
import { checkSubagentStored, resumeSubagentCrash } from "./subagent-crash.js";
import { checkStoredAfterKill, kinds, SLACK_MS, type StoredWait } from "./crash-checks.js";
import { check, checkTranscript } from "./invariants.js";
import type { HarnessChildMessage } from "./protocol.js";
import {
  PREAMBLE,
  PROGRESS_WINDOW_MS,
  QUESTION,
  REQUEST_ID,
  RETRY_FAILURE_TEXT,
  scenarioScript,
  scenarioTools,
  scriptedModels,
  scriptId,
  type CrashScenario,
  type HarnessModelFactory,
} from "./scripts.js";

export interface HarnessCrashOptions {
  /** Module the child imports; it must export `open(path: string): Promise<Storage>`. */
  childModule: string | URL;
  /** Opens the same backend at `path` in the test process. */
  open: (path: string) => Promise<Storage>;
  /** Node arguments for the child, e.g. `["--conditions=@durably/source", "--import", "tsx"]`. */
  nodeArgs?: readonly string[];
  /**
   * A module the child imports for its model: it must export
   * `createModel(script)`, a `HarnessModelFactory` answering like the
   * suite's `models` (default: ScriptedModel in both processes).
   */
  modelModule?: string | URL;
}

/** Streamed characters the child shows before the "stream" kill. */
const KILL_AFTER_CHARS = 600;
/** Summary characters the child shows before the "compaction" kill. */
const KILL_AFTER_SUMMARY = 150;

/** The tool scenarios' moment: the tool runs, and its first output line is stored. */
const TOOL_RUNNING = {
  what: "the tool to run",
  at: (m: HarnessChildMessage) => m.type === "tool-running",
  thenMs: PROGRESS_WINDOW_MS + SLACK_MS,
};

/**
 * Each scenario's kill moment: the child message that marks it (named for
 * the timeout's message), and how long to wait after it, if at all.
 */
const MOMENTS: Record<
  CrashScenario,
  { what: string; at: (m: HarnessChildMessage) => boolean; thenMs?: number }
> = {
  stream: {
    what: `${KILL_AFTER_CHARS} streamed characters`,
    at: (m) => m.type === "text" && m.length >= KILL_AFTER_CHARS,
  },
  compaction: {
    what: `${KILL_AFTER_SUMMARY} characters of the summary`,
    at: (m) => m.type === "summary" && m.length >= KILL_AFTER_SUMMARY,
  },
  "tool-commit": {
    what: "the tool inside its second api.commit",
    at: (m) => m.type === "committing",
  },
  // The helper streams meanwhile.
  subagent: {
    what: "the subagent's conversation",
    at: (m) => m.type === "subagent-created",
    thenMs: PROGRESS_WINDOW_MS + SLACK_MS / 2,
  },
  approval: {
    what: "the call to wait for approval",
    at: (m) => m.type === "approval-pending",
  },
  "approval-retry": { what: "the child's decision", at: (m) => m.type === "approved" },
  "retry-wait": { what: "the retry wait", at: (m) => m.type === "retry-waiting" },
  "safe-tool": TOOL_RUNNING,
  "unsafe-tool": TOOL_RUNNING,
};

/** Waits for the scenario's moment in the child. */
async function untilMoment(child: HarnessChild, scenario: CrashScenario): Promise<void> {
  const moment = MOMENTS[scenario];
  await child.waitFor(moment.what, (m): m is HarnessChildMessage => moment.at(m));
  if (moment.thenMs !== undefined) await sleep(moment.thenMs);
}

/**
 * Runs the scenario's submission in a child, SIGKILLs it at the scenario's
 * moment, checks what storage kept, then resumes in this process and checks
 * the run finishes exactly once with the scenario's outcome.
 */
export async function runCrashScenario(
  options: HarnessCrashOptions,
  scenario: CrashScenario,
  models: HarnessModelFactory = scriptedModels,
): Promise<void> {
  await withTempStorage(async (path) => {
    const id = scriptId(scenario);
    const child = new HarnessChild(options.childModule, path, scenario, options.nodeArgs ?? [], {
      ...(options.modelModule !== undefined ? { module: options.modelModule } : {}),
      scriptId: id,
    });
    let killedAt: number;
    let submitted: Extract<HarnessChildMessage, { type: "submitted" }>;
    try {
      submitted = await child.waitFor(
        "the submission",
        (m): m is typeof submitted => m.type === "submitted",
      );
      await untilMoment(child, scenario);
    } finally {
      killedAt = await child.kill();
    }

    if (scenario === "subagent") {
      const stored = await options.open(path);
      let subagent;
      try {
        subagent = await checkSubagentStored(stored, child.messages);
      } finally {
        await stored.close();
      }
      await resumeSubagentCrash(() => options.open(path), id, models, subagent);
      const reopened = await options.open(path);
      try {
        await checkTranscript(reopened, ROOT_CONVERSATION_ID, "subagent: after resuming");
        await checkTranscript(reopened, subagent, "subagent: its child after resuming");
      } finally {
        await reopened.close();
      }
      return;
    }

    if (isApprovalCrash(scenario)) {
      const stored = await options.open(path);
      try {
        await checkApprovalStored(stored, scenario, child.messages);
      } finally {
        await stored.close();
      }
      await resumeApprovalCrash(() => options.open(path), scenario, id, models, child.messages);
      const reopened = await options.open(path);
      try {
        await checkTranscript(reopened, ROOT_CONVERSATION_ID, `${scenario}: after resuming`);
      } finally {
        await reopened.close();
      }
      return;
    }

    if (isAgentCrash(scenario)) {
      const stored = await options.open(path);
      try {
        await checkAgentStored(stored, scenario);
      } finally {
        await stored.close();
      }
      await resumeAgentCrash(() => options.open(path), scenario, id, models);
      const reopened = await options.open(path);
      try {
        await checkTranscript(reopened, ROOT_CONVERSATION_ID, `${scenario}: after resuming`);
      } finally {
        await reopened.close();
      }
      return;
    }

    // ---- what storage kept, before anything resumes ------------------------
    const raw = await options.open(path);
    let wait: StoredWait | undefined;
    try {
      wait = await checkStoredAfterKill(raw, {
        scenario,
        submissionId: submitted.submissionId,
        killedAt,
        messages: child.messages,
      });
    } finally {
      await raw.close();
    }

    // ---- resume in this process ---------------------------------------------
    const executed: [string, number][] = [];
    const harness = await Harness.open(await options.open(path), {
      model: models(scenarioScript(scenario, "parent", id)),
      tools: scenarioTools("parent", {
        running: () => undefined,
        executed: (n, a) => executed.push([n, a]),
      }),
    });
    try {
      const settlements: SubmissionRecord[] = [];
      harness.session.subscribeCommits((event) => {
        for (const w of event.writes)
          if (
            w.type === "submission" &&
            (w.value.status === "done" || w.value.status === "unanswered")
          )
            settlements.push(w.value);
      });
      // Opening reconciled: nothing is left "running" by the dead process.
      const running = await harness.session.read.scanTasks({ status: "running" }, 10);
      check(
        running.items.length === 0,
        () =>
          `${scenario}: after Harness.open, tasks ${running.items.map((t) => `${t.id} (${t.kind})`).join(", ")} are still running`,
      );
      const root = await harness.root();
      // The same request after the restart is the same submission (requestId), not a second one.
      const again = await root.submit({ type: "input", content: QUESTION, requestId: REQUEST_ID });
      check(
        again.id === submitted.submissionId,
        () =>
          `${scenario}: the retried submit made submission ${again.id}, not ${submitted.submissionId}`,
      );
      const settled = await again.wait();
      const settledAt = Date.now();
      await harness.whenIdle();
      check(
        settled.status === "done",
        () => `${scenario}: the submission settled ${JSON.stringify(settled)}`,
      );
      check(
        settlements.length === 1,
        () => `${scenario}: the submission was settled ${settlements.length} times`,
      );
      const entries = await root.entries();
      check(
        kinds(entries) ===
          "durably.user, durably.assistant, durably.tool-result, durably.assistant",
        () => `${scenario}: final transcript is ${kinds(entries)}`,
      );
      check(
        settled.answer === entries[3]?.id,
        () => `${scenario}: answer ${settled.answer} is not the last entry`,
      );
      const result = entries[2]?.model?.[0];
      check(result?.role === "toolResult", () => `${scenario}: entry 3 is not a tool result`);
      if (scenario === "retry-wait") {
        check(
          wait !== undefined && settledAt >= wait.retryAt,
          () =>
            `retry-wait: the run settled at ${settledAt}, before the stored wait ended at ${wait?.retryAt}`,
        );
        check(
          !JSON.stringify(entries).includes(RETRY_FAILURE_TEXT),
          () => "retry-wait: the failed attempt's partial output ended up in the transcript",
        );
        check(
          result.content === "5" && !result.isError,
          () => `retry-wait: tool result ${JSON.stringify(result)}`,
        );
      } else if (scenario === "stream") {
        check(
          result.content === "5" && !result.isError,
          () => `stream: tool result ${JSON.stringify(result)}`,
        );
        const answer = entries[1]?.model?.[0];
        check(
          answer?.role === "assistant" &&
            answer.content[0]?.type === "text" &&
            answer.content[0].text === PREAMBLE,
          () => "stream: the rerun's assistant entry should hold the whole streamed text once",
        );
      } else if (scenario === "safe-tool") {
        check(
          result.content === "fetch finished on attempt 2" && !result.isError,
          () => `safe-tool: expected a rerun (attempt 2), got ${JSON.stringify(result)}`,
        );
        check(
          JSON.stringify(executed) === '[["fetch",2]]',
          () => `safe-tool: executions after the restart: ${JSON.stringify(executed)}`,
        );
      } else {
        check(
          result.isError &&
            typeof result.content === "string" &&
            result.content.startsWith("interrupted:") &&
            result.content.endsWith("Output so far:\ncharge: step 1 of attempt 1\n"),
          () =>
            `unsafe-tool: expected an interrupted result with the output so far, got ${JSON.stringify(result)}`,
        );
        check(
          executed.length === 0,
          () => `unsafe-tool: the unsafe tool ran again: ${JSON.stringify(executed)}`,
        );
        check(
          (entries[2]?.data as { interrupted?: boolean }).interrupted === true,
          () => "unsafe-tool: entry data lacks interrupted: true",
        );
      }
      const view = await root.view();
      check(
        view.live.run === null &&
          view.live.generation === null &&
          view.live.retry === undefined &&
          Object.keys(view.live.tools).length === 0,
        () => `${scenario}: live is not idle after the run: ${JSON.stringify(view.live)}`,
      );
    } finally {
      await harness.close();
    }
    const reopened = await options.open(path);
    try {
      await checkTranscript(reopened, ROOT_CONVERSATION_ID, `${scenario}: after the resumed run`);
    } finally {
      await reopened.close();
    }
  });
}
