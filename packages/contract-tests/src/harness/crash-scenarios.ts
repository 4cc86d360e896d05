import {
  Harness,
  ROOT_CONVERSATION_ID,
  type EntryRecord,
  type Storage,
  type SubmissionRecord,
} from "@durably/core";
import { sleep, withTempStorage } from "../crash/temp-storage.js";
import { HarnessChild } from "./child-process.js";
import { check, checkTranscript, storedDoc, storedEntries } from "./invariants.js";
import type { HarnessChildMessage } from "./protocol.js";
import {
  PREAMBLE,
  PROGRESS_WINDOW_MS,
  QUESTION,
  REQUEST_ID,
  scenarioModel,
  scenarioTools,
  type CrashScenario,
} from "./scripts.js";

export interface HarnessCrashOptions {
  /** Module the child imports; it must export `open(path: string): Promise<Storage>`. */
  childModule: string | URL;
  /** Opens the same backend at `path` in the test process. */
  open: (path: string) => Promise<Storage>;
  /** Node arguments for the child, e.g. `["--conditions=@durably/source", "--import", "tsx"]`. */
  nodeArgs?: readonly string[];
}

/** Timer and IPC delays on a busy machine, on top of the progress window. */
const SLACK_MS = 400;
/** Streamed characters the child shows before the "stream" kill. */
const KILL_AFTER_CHARS = 600;

type Live = {
  run: { submissionId: number } | null;
  generation: { text: string } | null;
  tools: Record<string, { toolName: string; output: string; attempt: number }>;
};

const kinds = (entries: readonly EntryRecord[]): string => entries.map((e) => e.kind).join(", ");

/**
 * Runs the scenario's submission in a child, SIGKILLs it at the scenario's
 * moment, checks what storage kept, then resumes in this process and checks
 * the run finishes exactly once with the scenario's outcome.
 */
export async function runCrashScenario(
  options: HarnessCrashOptions,
  scenario: CrashScenario,
): Promise<void> {
  await withTempStorage(async (path) => {
    const child = new HarnessChild(options.childModule, path, scenario, options.nodeArgs ?? []);
    let killedAt: number;
    let submitted: Extract<HarnessChildMessage, { type: "submitted" }>;
    try {
      submitted = await child.waitFor(
        "the submission",
        (m): m is typeof submitted => m.type === "submitted",
      );
      if (scenario === "stream") {
        await child.waitFor(
          `${KILL_AFTER_CHARS} streamed characters`,
          (m): m is HarnessChildMessage => m.type === "text" && m.length >= KILL_AFTER_CHARS,
        );
      } else {
        await child.waitFor(
          "the tool to run",
          (m): m is HarnessChildMessage => m.type === "tool-running",
        );
        await sleep(PROGRESS_WINDOW_MS + SLACK_MS); // its first output line is stored by now
      }
    } finally {
      killedAt = await child.kill();
    }

    // ---- what storage kept, before anything resumes ------------------------
    const conversationId = ROOT_CONVERSATION_ID;
    const raw = await options.open(path);
    try {
      await checkTranscript(raw, conversationId, `${scenario}: after the kill`);
      const entries = await storedEntries(raw, conversationId);
      check(
        entries[0]?.kind === "durably.user",
        () =>
          `${scenario}: the user entry (acknowledged before the kill) is missing; stored: ${kinds(entries)}`,
      );
      const live = (await storedDoc(raw, "durably.live", conversationId)) as Live | undefined;
      check(
        live?.run?.submissionId === submitted.submissionId,
        () => `${scenario}: live.run lost: ${JSON.stringify(live?.run)}`,
      );
      if (scenario === "stream") {
        check(
          entries.length === 1,
          () => `stream: only the user entry may be stored mid-stream; stored: ${kinds(entries)}`,
        );
        const stored = live.generation?.text ?? "";
        check(
          PREAMBLE.startsWith(stored),
          () =>
            `stream: stored partial text is not a prefix of the stream: ${JSON.stringify(stored.slice(0, 80))}`,
        );
        const mustHave = child.messages
          .filter((m): m is Extract<HarnessChildMessage, { type: "text" }> => m.type === "text")
          .filter((m) => m.at <= killedAt - PROGRESS_WINDOW_MS - SLACK_MS)
          .reduce((max, m) => Math.max(max, m.length), 0);
        check(
          stored.length >= mustHave,
          () =>
            `stream: ${mustHave} characters were shown more than ${PROGRESS_WINDOW_MS + SLACK_MS} ms before the kill, but only ${stored.length} were stored`,
        );
      } else {
        const name = scenario === "safe-tool" ? "fetch" : "charge";
        check(
          entries.length === 2,
          () => `${scenario}: expected the user entry and the tool call; stored: ${kinds(entries)}`,
        );
        const slot = Object.values(live.tools)[0];
        check(
          slot?.toolName === name && slot.output === `${name}: step 1 of attempt 1\n`,
          () =>
            `${scenario}: the tool slot should hold the output stored before the kill; found ${JSON.stringify(slot)}`,
        );
      }
    } finally {
      await raw.close();
    }

    // ---- resume in this process ---------------------------------------------
    const executed: [string, number][] = [];
    const harness = await Harness.open(await options.open(path), {
      model: scenarioModel(scenario, "parent"),
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
      if (scenario === "stream") {
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
