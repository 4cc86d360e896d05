import { Harness, type LiveRetry, type SubmissionRecord } from "@durably/core";
import type { Reopen } from "../storage/api.js";
import { check } from "./invariants.js";
import type { HarnessScenario } from "./scenarios.js";
import { scriptId } from "./scripts.js";

/** Short waits, so the scenarios stay fast. */
const QUICK_RETRY = { initialDelayMs: 20, maxDelayMs: 5_000 };

const PARTIAL = "half an answer that must not be kept ";

/** Resolves with the first `live.retry` a watcher of the root conversation sees. */
function firstRetry(harness: Harness): Promise<LiveRetry> {
  return harness.root().then(
    (root) =>
      new Promise<LiveRetry>((resolve) => {
        const stop = root.watch((view) => {
          if (view.live.retry) {
            resolve({ ...view.live.retry });
            queueMicrotask(() => stop());
          }
        });
      }),
  );
}

const detailOf = (settled: SubmissionRecord) =>
  (settled.detail ?? {}) as { message?: string; attempts?: number; kind?: string };

/** Model failures and model names, through whatever model the suite runs. */
export const modelScenarios: readonly HarnessScenario[] = [
  {
    name: "a retryable model failure is retried: the input is answered once and the failed attempt's partial is not kept",
    async run(storage, _reopen, models) {
      const model = models({
        id: scriptId("retry"),
        turns: [
          {
            text: "the answer",
            failures: [
              { message: "overloaded", retryable: true, kind: "transient", text: PARTIAL },
            ],
          },
        ],
      });
      const harness = await Harness.open(storage, { model, settings: { retry: QUICK_RETRY } });
      try {
        const retry = firstRetry(harness);
        const root = await harness.root();
        const settled = await (await root.submit({ type: "input", content: "q" })).wait();
        const shown = await retry;
        check(
          shown.attempt === 2 && shown.maxAttempts === 5 && shown.error.kind === "transient",
          () =>
            `the live view should show attempt 2 of 5 after a transient error; showed ${JSON.stringify(shown)}`,
        );
        const entries = await root.entries();
        check(
          settled.status === "done" && entries.length === 2 && settled.answer === entries[1]?.id,
          () =>
            `settled ${JSON.stringify(settled)} with entries ${JSON.stringify(entries.map((e) => e.kind))}`,
        );
        check(
          !JSON.stringify(entries).includes(PARTIAL),
          () => "the failed attempt's partial output was stored in the transcript",
        );
        const live = (await root.view()).live;
        check(
          live.retry === undefined && live.run === null,
          () => `live after the run: ${JSON.stringify(live)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a non-retryable model failure settles the input unanswered at once, with the provider's message",
    async run(storage, _reopen, models) {
      const model = models({
        id: scriptId("invalid"),
        turns: [
          { failures: [{ message: "the model refused the request shape", kind: "invalid" }] },
        ],
      });
      const harness = await Harness.open(storage, { model, settings: { retry: QUICK_RETRY } });
      try {
        const root = await harness.root();
        const settled = await (await root.submit({ type: "input", content: "q" })).wait();
        const detail = detailOf(settled);
        check(
          settled.status === "unanswered" &&
            settled.reason === "model-error" &&
            detail.message?.includes("the model refused the request shape") === true &&
            detail.attempts === 1,
          () => `expected unanswered model-error after 1 attempt, got ${JSON.stringify(settled)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a harness closed during a retry wait resumes the wait on reopen, counting the attempts made",
    persistent: true,
    async run(storage, reopen, models) {
      const id = scriptId("retry-reopen");
      const script = {
        id,
        turns: [
          {
            text: "never",
            failures: [
              { message: "busy 1", retryable: true },
              { message: "busy 2", retryable: true },
            ],
          },
        ],
      };
      const retry = { initialDelayMs: 600, maxDelayMs: 5_000, maxAttempts: 2 };
      const first = await Harness.open(storage, { model: models(script), settings: { retry } });
      const waiting = firstRetry(first);
      const submission = await (await first.root()).submit({ type: "input", content: "q" });
      const shown = await waiting;
      await first.close(); // inside the wait: the retry checkpoint is stored
      const harness = await Harness.open(await (reopen as Reopen)(), {
        model: models(script),
        settings: { retry },
      });
      try {
        const settled = await (await (await harness.root()).submission(submission.id)).wait();
        const settledAt = Date.now();
        const detail = detailOf(settled);
        check(
          settled.status === "unanswered" &&
            settled.reason === "model-error" &&
            detail.attempts === 2,
          () =>
            `with maxAttempts 2, the attempt after the reopen is the last: expected unanswered model-error after 2 attempts, got ${JSON.stringify(settled)}`,
        );
        check(
          settledAt >= shown.retryAt,
          () =>
            `the reopened run called the model at ${settledAt}, before the stored wait ended at ${shown.retryAt}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a run naming a model the reopened harness lacks settles unanswered unknown-model, naming it",
    persistent: true,
    async run(storage, reopen, models) {
      const slow = models({
        id: scriptId("slow"),
        turns: [{ text: "x".repeat(400) }],
        options: { chunkSize: 1, chunkDelayMs: 20 },
      });
      const first = await Harness.open(storage, {
        models: { default: models({ id: scriptId("default"), turns: [] }), slow },
      });
      const submission = await (
        await first.root()
      ).submit({
        type: "input",
        content: "q",
        model: "slow",
      });
      await first.close(); // mid-answer: the run is stored, naming "slow"
      const harness = await Harness.open(await (reopen as Reopen)(), {
        model: models({ id: scriptId("other"), turns: [{ text: "x" }] }),
      });
      try {
        const settled = await (await (await harness.root()).submission(submission.id)).wait();
        check(
          settled.status === "unanswered" &&
            settled.reason === "unknown-model" &&
            detailOf(settled).message?.includes('"slow"') === true,
          () => `expected unanswered unknown-model naming "slow", got ${JSON.stringify(settled)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
];
