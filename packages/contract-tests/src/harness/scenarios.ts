import { contentText, Harness, ROOT_CONVERSATION_ID, type Storage } from "@durably/core";
import type { Reopen } from "../storage/api.js";
import { check, checkTranscript, storedDoc } from "./invariants.js";
import { agentScenarios } from "./agent-scenarios.js";
import { approvalScenarios } from "./approval-scenarios.js";
import { hookScenarios } from "./hook-scenarios.js";
import { steeringScenarios } from "./steering-scenarios.js";
import { compactionScenarios } from "./compaction-scenarios.js";
import { contextScenarios } from "./context-scenarios.js";
import { convenienceScenarios } from "./convenience-scenarios.js";
import { livenessScenarios } from "./liveness-scenarios.js";
import { modelScenarios } from "./model-scenarios.js";
import { toolScenarios } from "./tool-scenarios.js";
import { usageScenarios } from "./usage-scenarios.js";
import { scenarioTools, scriptId, type HarnessModelFactory } from "./scripts.js";

export interface HarnessScenario {
  readonly name: string;
  /** Needs `reopen` (a persistent adapter); skipped otherwise. */
  readonly persistent?: boolean;
  /** `models` makes the scenario's model from its script (ScriptedModel unless the suite was given another). */
  run(storage: Storage, reopen: Reopen | undefined, models: HarnessModelFactory): Promise<void>;
}

const tools = () =>
  scenarioTools("parent", { running: () => undefined, executed: () => undefined });

const kinds = (entries: readonly { kind: string }[]): string =>
  entries.map((e) => e.kind).join(", ");

const runScenarios: readonly HarnessScenario[] = [
  {
    name: "a run with a tool call stores user, call, result and answer, and settles done",
    async run(storage, _reopen, models) {
      const model = models({
        id: scriptId("tool-run"),
        turns: [
          { text: "let me add", toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
          { text: "2 + 3 = 5" },
        ],
      });
      const harness = await Harness.open(storage, { model, tools: tools() });
      try {
        const root = await harness.root();
        const settled = await (await root.submit({ type: "input", content: "2+3?" })).wait();
        const entries = await root.entries();
        check(
          kinds(entries) ===
            "durably.user, durably.assistant, durably.tool-result, durably.assistant",
          () => `transcript: ${kinds(entries)}`,
        );
        check(
          settled.status === "done" && settled.answer === entries[3]?.id,
          () => `settled: ${JSON.stringify(settled)}`,
        );
        const result = entries[2]?.model?.[0];
        check(
          result?.role === "toolResult" && contentText(result.content) === "5",
          () => `result: ${JSON.stringify(result)}`,
        );
        await checkTranscript(storage, ROOT_CONVERSATION_ID, "after the run");
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "an input submitted while busy waits in the inbox and is answered next",
    async run(storage, _reopen, models) {
      const model = models({
        id: scriptId("follow-up"),
        // The first answer streams for about half a second, so the second input is still
        // queued when the stored inbox is read, even on a slow backend on a busy machine.
        turns: [{ text: `first answer ${"-".repeat(90)}` }, { text: "second answer" }],
        options: { chunkSize: 1, chunkDelayMs: 5 },
      });
      const harness = await Harness.open(storage, { model });
      try {
        const root = await harness.root();
        const first = await root.submit({ type: "input", content: "one" });
        const second = await root.submit({ type: "input", content: "two" });
        check(
          second.submitted.status === "queued",
          () => `second: ${second.submitted.status}, expected queued`,
        );
        const inbox = (await storedDoc(storage, "durably.inbox", ROOT_CONVERSATION_ID)) as {
          queued: { submissionId: number }[];
        };
        check(
          inbox.queued[0]?.submissionId === second.id,
          () => `stored inbox: ${JSON.stringify(inbox)}`,
        );
        const done = await second.wait();
        check(
          (await first.wait()).status === "done" && done.status === "done",
          () => "both must be answered",
        );
        const users = (await root.entries())
          .filter((e) => e.kind === "durably.user")
          .map((e) => e.model?.[0]);
        check(
          JSON.stringify(users.map((u) => (u as { content: string }).content)) === '["one","two"]',
          () => `user entries: ${JSON.stringify(users)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "streamed text is shown before it is stored and stored within the progress window",
    async run(storage, _reopen, models) {
      const windowMs = 150;
      const model = models({
        id: scriptId("progress-window"),
        turns: [{ text: "x".repeat(60) }],
        options: { chunkSize: 1, chunkDelayMs: 10 },
      });
      const harness = await Harness.open(storage, {
        model,
        settings: { progress: { persistWithinMs: windowMs } },
      });
      try {
        const root = await harness.root();
        const storedText = async (): Promise<string> =>
          (
            (await storedDoc(storage, "durably.live", ROOT_CONVERSATION_ID)) as {
              generation: { text: string } | null;
            }
          ).generation?.text ?? "";
        let shownAt = 0;
        let shownText = "";
        // The stored text is read as the text is first shown, not after a poll
        // notices it: on a loaded machine the poll can wake past the window and
        // see the progress already stored, which would blame the harness for
        // the test's own lateness.
        let storedWhenShown: Promise<string> | undefined;
        root.watch((view) => {
          const text = view.live.generation?.text ?? "";
          if (shownAt === 0 && text.length >= 5) {
            shownAt = Date.now();
            shownText = text;
            storedWhenShown = storedText();
          }
        });
        const submission = await root.submit({ type: "input", content: "stream" });
        while (storedWhenShown === undefined) await new Promise((r) => setTimeout(r, 2));
        let stored = await storedWhenShown;
        check(
          stored.length < shownText.length,
          () =>
            `"${shownText}" was already stored when first shown: progress must be shown before it is stored`,
        );
        for (;;) {
          if (stored.length >= shownText.length) break;
          check(
            Date.now() - shownAt <= windowMs + 400,
            () =>
              `"${shownText}" was shown but not stored within ${windowMs} ms (+400 ms slack); stored "${stored}"`,
          );
          await new Promise((r) => setTimeout(r, 5));
          stored = await storedText();
        }
        check((await submission.wait()).status === "done", () => "the stream must finish");
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a requestId deduplicates across a reopen, and a closed harness resumes its run",
    persistent: true,
    async run(storage, reopen, models) {
      const id = scriptId("request-id");
      const model = () =>
        models({
          id,
          turns: [{ toolCalls: [{ name: "fetch", arguments: { amount: 1 } }] }, { text: "done" }],
        });
      const first = await Harness.open(storage, { model: model(), tools: tools() });
      const root = await first.root();
      const submitted = await root.submit({ type: "input", content: "q", requestId: "same" });
      await first.close(); // before the scheduler got far: the run resumes after the reopen
      const harness = await Harness.open(await (reopen as Reopen)(), {
        model: model(),
        tools: tools(),
      });
      try {
        const again = await (
          await harness.root()
        ).submit({ type: "input", content: "q", requestId: "same" });
        check(
          again.id === submitted.id,
          () => `the retry made submission ${again.id}, not ${submitted.id}`,
        );
        const settled = await again.wait();
        check(settled.status === "done", () => `settled: ${JSON.stringify(settled)}`);
        const users = (await (await harness.root()).entries()).filter(
          (e) => e.kind === "durably.user",
        );
        check(users.length === 1, () => `${users.length} user entries, expected 1`);
      } finally {
        await harness.close();
      }
    },
  },
];

/**
 * Every in-process harness scenario: runs, model failures and names,
 * per-conversation agents, the usage ledger, what the model sees,
 * compaction, tools v2, the conveniences, then liveness (nothing waits forever).
 */
export const harnessScenarios: readonly HarnessScenario[] = [
  ...runScenarios,
  ...modelScenarios,
  ...agentScenarios,
  ...usageScenarios,
  ...contextScenarios,
  ...compactionScenarios,
  ...toolScenarios,
  ...convenienceScenarios,
  ...livenessScenarios,
  ...approvalScenarios,
  ...hookScenarios,
  ...steeringScenarios,
];
